import { JSON_SCHEMA_2020_12 } from '../model-schema.js';

const text = (description: string, maxLength = 500) => ({ description, type: 'string', minLength: 1, maxLength });
const quantity = (description: string, exclusiveMinimum?: number) => ({
  description,
  type: 'number',
  ...(exclusiveMinimum === undefined ? { minimum: 0 } : { exclusiveMinimum }),
});
const share = (description: string) => ({ description, type: 'number', minimum: 0, maximum: 100 });
const country = { description: 'ISO 3166-1 alpha-2 country code.', type: 'string', pattern: '^[A-Z]{2}$' };
const link = (description: string) => ({ description, type: 'string', format: 'uri' });

const example = {
  battery_identifier: 'https://id.gs1.org/01/09520123456788/21/EVB-2027-000417',
  manufacturer: {
    name: 'Voltara Cells GmbH',
    postal_address: 'Industriestraße 12, 38440 Wolfsburg, Germany',
    web_address: 'https://voltara.example',
    email: 'passport@voltara.example',
  },
  manufacturing_place: { country: 'DE', facility: 'Wolfsburg cell and pack plant' },
  manufacturing_date: '2027-03',
  battery_category: 'ev',
  battery_status: 'original',
  weight_kg: 452.5,
  chemistry: { short_name: 'NMC811', cathode: 'LiNi0.8Mn0.1Co0.1O2', anode: 'graphite', electrolyte: 'LiPF6 in EC/EMC' },
  critical_raw_materials: ['cobalt', 'lithium', 'natural graphite', 'nickel'],
  hazardous_substances: [{ name: 'lithium hexafluorophosphate', cas_number: '21324-40-3', hazard_classes: ['Acute Tox. 3', 'Skin Corr. 1A', 'STOT RE 1'] }],
  extinguishing_agent: 'water (large quantities); class D agent for exposed lithium',
  carbon_footprint: {
    total_kg_co2e_per_kwh: 61.3,
    life_cycle_stages: { raw_material_acquisition: 38.2, main_production: 19.6, distribution: 1.1, end_of_life: 2.4 },
    study_url: 'https://voltara.example/carbon-footprint/EVB-2027.pdf',
  },
  recycled_content: { cobalt_pct: 16, lithium_pct: 6, nickel_pct: 6, lead_pct: 0 },
  renewable_content_pct: 0,
  rated_capacity_ah: 220,
  voltage: { minimum_v: 280, nominal_v: 355, maximum_v: 403 },
  power_capability: { original_w: 180000, maximum_permitted_w: 210000 },
  expected_lifetime: { cycles: 1500, reference_test: 'IEC 62660-1:2018 cycle life test', c_rate: 0.33 },
  capacity_threshold_for_exhaustion_pct: 70,
  temperature_range_idle_c: { minimum: -30, maximum: 55 },
  commercial_warranty_years: 8,
  round_trip_efficiency: { initial_pct: 95.5, at_50pct_cycle_life_pct: 93 },
  internal_resistance: { cell_mohm: 0.9, pack_mohm: 95 },
  state_of_health: {
    measured_at: '2027-03-30T08:00:00Z',
    soh_pct: 100,
    remaining_capacity_ah: 220,
    remaining_power_capability_w: 180000,
    full_cycles: 0,
    deep_discharge_events: 0,
  },
  due_diligence_report_url: 'https://voltara.example/due-diligence/2027.pdf',
  declaration_of_conformity_url: 'https://voltara.example/doc/EVB-2027.pdf',
};

/**
 * A battery passport model after Regulation (EU) 2023/1542: the general battery information of
 * Annex VI Part A, the passport contents of Annex XIII (points 1 to 4) and the state-of-health
 * parameters of Article 14. Field names are the register's own (snake_case); descriptions cite
 * the provisions they come from. Carbon footprint and state of health are optional in the model
 * because they apply to some battery categories only; profiles require them where they apply.
 */
export const batteryPassportSchema = {
  $schema: JSON_SCHEMA_2020_12,
  title: 'Battery passport (Regulation (EU) 2023/1542, Annex XIII)',
  type: 'object',
  required: [
    'battery_identifier',
    'manufacturer',
    'manufacturing_place',
    'manufacturing_date',
    'battery_category',
    'battery_status',
    'weight_kg',
    'chemistry',
    'critical_raw_materials',
    'hazardous_substances',
    'rated_capacity_ah',
    'voltage',
    'expected_lifetime',
  ],
  properties: {
    battery_identifier: text('Unique identifier of the individual battery (Art. 77), e.g. a GS1 Digital Link URI.', 2048),
    manufacturer: {
      description: 'Manufacturer identification (Annex VI Part A).',
      type: 'object',
      required: ['name', 'postal_address'],
      properties: {
        name: text('Name, registered trade name or registered trade mark.'),
        postal_address: text('Postal address, with a single contact point.', 1000),
        web_address: link('Web address.'),
        email: { description: 'Electronic contact address.', type: 'string', format: 'email' },
      },
      additionalProperties: false,
    },
    manufacturing_place: {
      description: 'Place of manufacture (Annex VI Part A).',
      type: 'object',
      required: ['country'],
      properties: { country, facility: text('Name or address of the manufacturing facility.') },
      additionalProperties: false,
    },
    manufacturing_date: {
      description: 'Date of manufacture, month and year (Annex VI Part A).',
      type: 'string',
      pattern: '^[0-9]{4}-(?:0[1-9]|1[0-2])$',
    },
    battery_category: {
      description: 'Battery category (Art. 3).',
      enum: ['portable', 'portable_general_use', 'lmt', 'sli', 'industrial', 'ev'],
    },
    battery_status: {
      description: 'Status of the battery (Annex XIII point 4).',
      enum: ['original', 'repurposed', 're-used', 'remanufactured', 'waste'],
    },
    weight_kg: quantity('Weight in kilograms (Annex VI Part A).', 0),
    chemistry: {
      description: 'Battery chemistry and material composition (Annex VI Part A; Annex XIII point 1).',
      type: 'object',
      required: ['short_name'],
      properties: {
        short_name: text('Common name of the chemistry, e.g. NMC811, LFP.', 64),
        cathode: text('Cathode active material.'),
        anode: text('Anode active material.'),
        electrolyte: text('Electrolyte.'),
      },
      additionalProperties: false,
    },
    critical_raw_materials: {
      description: 'Critical raw materials present above 0.1 % weight by weight (Annex VI Part A).',
      type: 'array',
      items: text('Critical raw material, by name.', 100),
      uniqueItems: true,
    },
    hazardous_substances: {
      description: 'Hazardous substances contained, other than mercury, cadmium and lead (Annex VI Part A; Annex XIII point 1).',
      type: 'array',
      items: {
        type: 'object',
        required: ['name'],
        properties: {
          name: text('Substance name.'),
          cas_number: { description: 'CAS Registry Number.', type: 'string', pattern: '^[0-9]{2,7}-[0-9]{2}-[0-9]$' },
          hazard_classes: {
            description: 'Hazard classes and categories under Regulation (EC) No 1272/2008.',
            type: 'array',
            items: text('Hazard class and category code.', 64),
          },
        },
        additionalProperties: false,
      },
    },
    extinguishing_agent: text('Usable extinguishing agent (Annex VI Part A).'),
    carbon_footprint: {
      description: 'Carbon footprint (Art. 7; Annex II), in kg CO2 equivalent per kWh of total energy over the service life.',
      type: 'object',
      required: ['total_kg_co2e_per_kwh', 'life_cycle_stages'],
      properties: {
        total_kg_co2e_per_kwh: quantity('Total carbon footprint.'),
        life_cycle_stages: {
          description: 'Contribution of each life-cycle stage (Annex II).',
          type: 'object',
          required: ['raw_material_acquisition', 'main_production', 'distribution', 'end_of_life'],
          properties: {
            raw_material_acquisition: quantity('Raw material acquisition and pre-processing.'),
            main_production: quantity('Main product production.'),
            distribution: quantity('Distribution.'),
            end_of_life: quantity('End of life and recycling.'),
          },
          additionalProperties: false,
        },
        performance_class: { description: 'Carbon footprint performance class (Art. 7).', type: 'string', pattern: '^[A-Z]$' },
        study_url: link('Web link to the public version of the carbon footprint study.'),
      },
      additionalProperties: false,
    },
    recycled_content: {
      description: 'Share of cobalt, lithium, nickel and lead in active materials recovered from waste, in percent (Art. 8).',
      type: 'object',
      properties: {
        cobalt_pct: share('Recycled cobalt share.'),
        lithium_pct: share('Recycled lithium share.'),
        nickel_pct: share('Recycled nickel share.'),
        lead_pct: share('Recycled lead share.'),
      },
      additionalProperties: false,
    },
    renewable_content_pct: share('Renewable content share (Annex XIII point 1).'),
    rated_capacity_ah: quantity('Rated capacity in ampere-hours (Annex XIII point 1).', 0),
    voltage: {
      description: 'Minimal, nominal and maximum voltage in volts (Annex XIII point 1).',
      type: 'object',
      required: ['minimum_v', 'nominal_v', 'maximum_v'],
      properties: {
        minimum_v: quantity('Minimal voltage.', 0),
        nominal_v: quantity('Nominal voltage.', 0),
        maximum_v: quantity('Maximum voltage.', 0),
      },
      additionalProperties: false,
    },
    power_capability: {
      description: 'Original power capability and limits in watts (Annex XIII point 1).',
      type: 'object',
      required: ['original_w'],
      properties: {
        original_w: quantity('Original power capability.', 0),
        maximum_permitted_w: quantity('Maximum permitted battery power.', 0),
      },
      additionalProperties: false,
    },
    expected_lifetime: {
      description: 'Expected lifetime in charge-discharge cycles, with the reference test and its C-rate (Annex XIII point 1).',
      type: 'object',
      required: ['cycles', 'reference_test'],
      properties: {
        cycles: { description: 'Expected number of full charge-discharge cycles.', type: 'integer', minimum: 1 },
        reference_test: text('Reference test used.'),
        c_rate: quantity('C-rate of the cycle-life test.', 0),
      },
      additionalProperties: false,
    },
    capacity_threshold_for_exhaustion_pct: share('Capacity threshold for exhaustion, electric vehicle batteries only (Annex XIII point 1).'),
    temperature_range_idle_c: {
      description: 'Temperature range the battery can withstand when not in use, in °C (Annex XIII point 1).',
      type: 'object',
      required: ['minimum', 'maximum'],
      properties: { minimum: { type: 'number' }, maximum: { type: 'number' } },
      additionalProperties: false,
    },
    commercial_warranty_years: quantity('Period of the commercial warranty for the calendar life, in years (Annex XIII point 1).'),
    round_trip_efficiency: {
      description: 'Round-trip energy efficiency, initially and at 50 % of cycle life, in percent (Annex XIII point 1).',
      type: 'object',
      properties: { initial_pct: share('Initial round-trip efficiency.'), at_50pct_cycle_life_pct: share('At 50 % of cycle life.') },
      additionalProperties: false,
    },
    internal_resistance: {
      description: 'Internal resistance of cell and pack in milliohms (Annex XIII point 1).',
      type: 'object',
      properties: { cell_mohm: quantity('Cell internal resistance.', 0), pack_mohm: quantity('Pack internal resistance.', 0) },
      additionalProperties: false,
    },
    state_of_health: {
      description: 'State of health and expected lifetime (Art. 14; Annex XIII point 4).',
      type: 'object',
      required: ['measured_at'],
      properties: {
        measured_at: { description: 'When the values were determined.', type: 'string', format: 'date-time' },
        soh_pct: share('State of health.'),
        remaining_capacity_ah: quantity('Remaining capacity.'),
        remaining_power_capability_w: quantity('Remaining power capability.'),
        full_cycles: { description: 'Number of full charge-discharge cycles.', type: 'integer', minimum: 0 },
        deep_discharge_events: { description: 'Number of deep-discharge events.', type: 'integer', minimum: 0 },
      },
      additionalProperties: false,
    },
    due_diligence_report_url: link('Information on the supply-chain due diligence report (Annex XIII point 1).'),
    declaration_of_conformity_url: link('EU declaration of conformity.'),
  },
  additionalProperties: false,
  examples: [example],
};
