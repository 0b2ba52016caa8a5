/**
 * One colour per name in every chart, whatever the legend order: a fixed table for the engines the
 * service knows, and for any other name (a new engine, a rival, the brand) a colour picked by a hash
 * of the name. Colours are Okabe–Ito (without its yellow, too light on white) plus a purple and a grey:
 * told apart with the common colour-vision deficiencies, dark enough on the white card. Pure.
 */

/** Okabe–Ito based; the order is the hash's. */
export const CHART_PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#6B4C9A', '#4D4D4D'] as const;

/** Known engines, by name in lower case with only letters and digits kept ("Google AI Overviews" → "googleaioverviews"). */
export const ENGINE_COLOURS: Readonly<Record<string, (typeof CHART_PALETTE)[number]>> = {
  chatgpt: '#0072B2',
  claude: '#D55E00',
  gemini: '#009E73',
  perplexity: '#CC79A7',
  copilot: '#E69F00',
  googleaioverviews: '#56B4E9',
  aioverviews: '#56B4E9',
  metaai: '#6B4C9A',
  grok: '#4D4D4D',
};

function key(name: string): string {
  return name.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
}

/** FNV-1a of the name's key: stable across processes and releases. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (const ch of text) {
    h ^= ch.codePointAt(0) ?? 0;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The colour of one name, alone: its table entry, else its hash's. */
export function colourOf(name: string): string {
  const k = key(name);
  return ENGINE_COLOURS[k] ?? CHART_PALETTE[hash(k) % CHART_PALETTE.length] ?? CHART_PALETTE[0];
}

/**
 * The colours of one chart's names. Known engines always keep theirs; another name whose hash colour is
 * already taken in this chart takes the next free one, unknown names being placed in name order (not
 * legend order), so the same names get the same colours in every chart.
 */
export function coloursFor(names: readonly string[]): Map<string, string> {
  const colours = new Map<string, string>();
  const used = new Set<string>();
  for (const name of names)
    if (ENGINE_COLOURS[key(name)] !== undefined) {
      colours.set(name, colourOf(name));
      used.add(colourOf(name));
    }
  const others = names.filter((n) => !colours.has(n)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const name of others) {
    const start = CHART_PALETTE.indexOf(colourOf(name) as (typeof CHART_PALETTE)[number]);
    const free = CHART_PALETTE.map((_, i) => CHART_PALETTE[(start + i) % CHART_PALETTE.length] as string).find((c) => !used.has(c));
    const colour = free ?? colourOf(name);
    colours.set(name, colour);
    used.add(colour);
  }
  return colours;
}
