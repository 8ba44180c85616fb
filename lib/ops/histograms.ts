/**
 * The request histograms' own accumulators and their text exposition. prom-client's Histogram makes a
 * string of the labels, a label object and a string key of the bucket inside every `observe` (about
 * 0.8 µs an observation and the garbage it leaves, several dozen a request); here a series is found
 * once by its labels' values and an observation adds to numbers only. The exposition is written as
 * prom-client 15 writes a histogram (same line order, `le` first, numbers as JavaScript prints them),
 * so that a scrape reads byte for byte as it did (test/ops/histograms.test.ts compares the two).
 */

/** A label value as the text format escapes it: backslash, double quote and newline. */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (character) => (character === '\n' ? '\\n' : `\\${character}`));
}

/** # HELP text as the text format escapes it: backslash and newline. */
const escapeHelp = (help: string) => help.replace(/[\\\n]/g, (character) => (character === '\n' ? '\\n' : '\\\\'));

/** Parts of an exposition are cut at about this many characters: no string of 128 KiB or more (a V8 large object, dear to make). */
const PART_CHARACTERS = 32 * 1024;

/** One histogram series: its buckets' counts (not cumulative), sum and count. */
export class HistogramSeries {
  readonly #family: HistogramFamily;
  readonly #shard: HistogramSeries[];
  /** `,name="value",…` of the series' labels, as they follow `le` on a bucket line. */
  readonly labelText: string;
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(family: HistogramFamily, shard: HistogramSeries[], labelText: string) {
    this.#family = family;
    this.#shard = shard;
    this.labelText = labelText;
    this.counts = new Float64Array(family.bounds.length);
  }

  /** Counts one value (seconds). A value that is not a finite number is not counted, as prom-client refuses it. */
  observe(value: number): void {
    if (!Number.isFinite(value)) return;
    const bounds = this.#family.bounds;
    let index = 0;
    while (index < bounds.length && value > bounds[index]!) index += 1;
    // A series appears in the exposition from its first observation on, in the order first observed.
    if (this.count === 0) this.#shard.push(this);
    if (index < bounds.length) this.counts[index]! += 1;
    this.sum += value;
    this.count += 1;
  }
}

/**
 * A histogram family: its name, help, label names (in exposition order) and bucket bounds, and its
 * series in shards (one a server), written shard after shard, each in the order first observed.
 */
export class HistogramFamily {
  readonly bounds: Float64Array;
  readonly #header: string;
  readonly #bucketHeads: string[];
  readonly #sumHead: string;
  readonly #countHead: string;
  readonly #shards: HistogramSeries[][] = [];

  constructor(
    readonly name: string,
    help: string,
    readonly labelNames: readonly string[],
    bounds: readonly number[],
  ) {
    this.bounds = Float64Array.from(bounds);
    this.#header = `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} histogram`;
    this.#bucketHeads = [...bounds.map(String), '+Inf'].map((le) => `\n${name}_bucket{le="${le}"`);
    this.#sumHead = `\n${name}_sum{`;
    this.#countHead = `\n${name}_count{`;
  }

  /** A shard of its own for a group of series (a server's): its series are written together. */
  shard(): (labelValues: readonly (string | number)[]) => HistogramSeries {
    const shard: HistogramSeries[] = [];
    this.#shards.push(shard);
    return (labelValues) => {
      const labelText = this.labelNames.map((name, index) => `,${name}="${escapeLabelValue(String(labelValues[index]))}"`).join('');
      return new HistogramSeries(this, shard, labelText);
    };
  }

  /** The family in the text format, in parts under PART_CHARACTERS each; joined, prom-client's text of the family (no trailing newline). */
  *parts(): Generator<string> {
    let text = this.#header;
    const heads = this.#bucketHeads;
    const last = heads.length - 1;
    for (const shard of this.#shards) {
      for (const series of shard) {
        const { labelText, counts, count } = series;
        let cumulative = 0;
        for (let index = 0; index < last; index += 1) {
          cumulative += counts[index]!;
          text += `${heads[index]}${labelText}} ${cumulative}`;
        }
        const labels = labelText.slice(1);
        text += `${heads[last]}${labelText}} ${count}${this.#sumHead}${labels}} ${series.sum}${this.#countHead}${labels}} ${count}`;
        if (text.length >= PART_CHARACTERS) {
          yield text;
          text = '';
        }
      }
    }
    if (text) yield text;
  }
}
