import { JSON_SCHEMA_2020_12 } from '../model-schema.js';

const text = (description: string, maxLength = 500) => ({ description, type: 'string', minLength: 1, maxLength });
const share = (description: string) => ({ description, type: 'number', minimum: 0, maximum: 100 });
const country = (description: string) => ({ description: `${description} (ISO 3166-1 alpha-2).`, type: 'string', pattern: '^[A-Z]{2}$' });

const example = {
  product_name: 'Organic cotton crew-neck T-shirt',
  gtin: '04012345000016',
  brand: 'Nordlicht Apparel',
  manufacturer: { name: 'Nordlicht Apparel AB', postal_address: 'Sveavägen 40, 111 34 Stockholm, Sweden', country: 'SE' },
  fibre_composition: [
    { fibre: 'cotton', percentage: 95, recycled: false },
    { fibre: 'elastane', percentage: 5, recycled: false },
  ],
  countries_of_manufacture: { spinning: 'IN', weaving_knitting: 'PT', dyeing_finishing: 'PT', making_up: 'PT' },
  care_instructions: { washing: '40', bleaching: 'do_not_bleach', tumble_drying: 'low', ironing: 'medium', professional_care: 'do_not_dry_clean' },
  recycled_content_pct: 0,
  substances_of_concern: [],
  repair_information_url: 'https://nordlicht.example/care-and-repair',
};

/**
 * A textile product model in the shape the Ecodesign for Sustainable Products Regulation
 * ((EU) 2024/1781) sets for product passports: fibre composition with the fibre names of
 * Regulation (EU) No 1007/2011, country of each manufacturing stage, ISO 3758 care, recycled
 * content and substances of concern (ESPR Art. 7(5)). That fibre percentages add up to 100 is a
 * rule JSON Schema cannot state; issuers check it.
 */
export const textileProductSchema = {
  $schema: JSON_SCHEMA_2020_12,
  title: 'Textile product passport (ESPR)',
  type: 'object',
  required: ['product_name', 'gtin', 'manufacturer', 'fibre_composition', 'countries_of_manufacture', 'care_instructions'],
  properties: {
    product_name: text('Product name.', 200),
    gtin: { description: 'GS1 Global Trade Item Number (GTIN-8, -12, -13 or -14).', type: 'string', pattern: '^(?:[0-9]{8}|[0-9]{12,14})$' },
    brand: text('Brand name.', 200),
    manufacturer: {
      description: 'The manufacturer or the economic operator placing the product on the market.',
      type: 'object',
      required: ['name', 'country'],
      properties: {
        name: text('Name or registered trade name.'),
        postal_address: text('Postal address.', 1000),
        country: country('Country of establishment'),
      },
      additionalProperties: false,
    },
    fibre_composition: {
      description: 'Fibre composition by weight, with the fibre names of Regulation (EU) No 1007/2011 Annex I.',
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['fibre', 'percentage'],
        properties: {
          fibre: text('Fibre name, e.g. cotton, wool, polyester, elastane.', 100),
          percentage: share('Share of the product weight.'),
          recycled: { description: 'Whether the fibre is recycled.', type: 'boolean' },
        },
        additionalProperties: false,
      },
    },
    countries_of_manufacture: {
      description: 'Country of each manufacturing stage.',
      type: 'object',
      required: ['making_up'],
      properties: {
        spinning: country('Spinning'),
        weaving_knitting: country('Weaving or knitting'),
        dyeing_finishing: country('Dyeing, printing and finishing'),
        making_up: country('Making up (cut and sew)'),
      },
      additionalProperties: false,
    },
    care_instructions: {
      description: 'Care labelling after ISO 3758: maximum washing temperature in °C or do_not_wash, and the other four treatments.',
      type: 'object',
      required: ['washing', 'bleaching', 'tumble_drying', 'ironing', 'professional_care'],
      properties: {
        washing: { enum: ['30', '40', '50', '60', '70', '95', 'hand_wash', 'do_not_wash'] },
        bleaching: { enum: ['any_bleach', 'oxygen_only', 'do_not_bleach'] },
        tumble_drying: { enum: ['normal', 'low', 'do_not_tumble_dry'] },
        ironing: { enum: ['low', 'medium', 'high', 'do_not_iron'] },
        professional_care: { enum: ['dry_clean_p', 'dry_clean_f', 'wet_clean', 'do_not_dry_clean'] },
      },
      additionalProperties: false,
    },
    recycled_content_pct: share('Share of recycled fibres by weight.'),
    substances_of_concern: {
      description: 'Substances of concern: name, identifiers, location in the product and concentration (ESPR Art. 7(5)).',
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'location', 'concentration_pct'],
        properties: {
          name: text('Substance name (IUPAC or other international name).'),
          cas_number: { description: 'CAS Registry Number.', type: 'string', pattern: '^[0-9]{2,7}-[0-9]{2}-[0-9]$' },
          ec_number: { description: 'EC number.', type: 'string', pattern: '^[0-9]{3}-[0-9]{3}-[0-9]$' },
          location: text('Where in the product the substance is.'),
          concentration_pct: share('Concentration, weight by weight.'),
        },
        additionalProperties: false,
      },
    },
    repair_information_url: { description: 'Care, repair and end-of-life information.', type: 'string', format: 'uri' },
  },
  additionalProperties: false,
  examples: [example],
};
