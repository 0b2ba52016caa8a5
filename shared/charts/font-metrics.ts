/**
 * Text widths from the font the PNG is drawn with. Without a canvas, vega guesses every character is
 * 0.8 em wide, so it truncates legend labels and titles that would fit and spaces axis labels too
 * widely; with the real advance widths (the font's `cmap` and `hmtx` tables; no kerning, which
 * DejaVu Sans barely uses) layout matches what resvg draws.
 */

export interface FontMetrics {
  /** Width of `text` at `fontSize`, in the same units as `fontSize`. */
  width(text: string, fontSize: number): number;
}

/** Characters the font has no glyph for are counted this wide (em). */
const FALLBACK_EM = 0.6;

/** Reads the advance widths of a TrueType font; `undefined` when the tables are not what is expected. */
export function fontMetrics(font: Uint8Array): FontMetrics | undefined {
  const view = new DataView(font.buffer, font.byteOffset, font.byteLength);
  try {
    const tables = tableOffsets(view);
    const head = tables.get('head');
    const hhea = tables.get('hhea');
    const hmtx = tables.get('hmtx');
    const cmap = tables.get('cmap');
    if (head === undefined || hhea === undefined || hmtx === undefined || cmap === undefined) return undefined;
    const unitsPerEm = view.getUint16(head + 18);
    const metricCount = view.getUint16(hhea + 34);
    const glyphOf = format4Lookup(view, cmap);
    if (glyphOf === undefined || unitsPerEm === 0 || metricCount === 0) return undefined;
    const advance = (glyph: number): number => view.getUint16(hmtx + 4 * Math.min(glyph, metricCount - 1));
    const cache = new Map<number, number>();
    const em = (code: number): number => {
      let value = cache.get(code);
      if (value === undefined) {
        const glyph = code <= 0xffff ? glyphOf(code) : 0;
        value = glyph === 0 ? FALLBACK_EM : advance(glyph) / unitsPerEm;
        cache.set(code, value);
      }
      return value;
    };
    return {
      width(text, fontSize) {
        let total = 0;
        for (const char of text) total += em(char.codePointAt(0) ?? 0);
        return total * fontSize;
      },
    };
  } catch {
    // A RangeError from a truncated or odd font: vega keeps its own estimate.
    return undefined;
  }
}

function tableOffsets(view: DataView): Map<string, number> {
  const count = view.getUint16(4);
  const tables = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const record = 12 + 16 * i;
    const tag = String.fromCharCode(...[0, 1, 2, 3].map((k) => view.getUint8(record + k)));
    tables.set(tag, view.getUint32(record + 8));
  }
  return tables;
}

/** The glyph index of a BMP code point, from the Unicode BMP (format 4) subtable of `cmap`. */
function format4Lookup(view: DataView, cmap: number): ((code: number) => number) | undefined {
  const count = view.getUint16(cmap + 2);
  for (let i = 0; i < count; i++) {
    const platform = view.getUint16(cmap + 4 + 8 * i);
    const encoding = view.getUint16(cmap + 6 + 8 * i);
    const sub = cmap + view.getUint32(cmap + 8 + 8 * i);
    const unicode = (platform === 3 && encoding === 1) || platform === 0;
    if (unicode && view.getUint16(sub) === 4) return format4(view, sub);
  }
  return undefined;
}

function format4(view: DataView, sub: number): (code: number) => number {
  const segments = view.getUint16(sub + 6) / 2;
  const ends = sub + 14;
  const starts = ends + 2 * segments + 2;
  const deltas = starts + 2 * segments;
  const rangeOffsets = deltas + 2 * segments;
  return (code) => {
    for (let s = 0; s < segments; s++) {
      if (view.getUint16(ends + 2 * s) < code) continue;
      const start = view.getUint16(starts + 2 * s);
      if (start > code) return 0;
      const delta = view.getInt16(deltas + 2 * s);
      const rangeOffset = view.getUint16(rangeOffsets + 2 * s);
      if (rangeOffset === 0) return (code + delta) & 0xffff;
      const glyph = view.getUint16(rangeOffsets + 2 * s + rangeOffset + 2 * (code - start));
      return glyph === 0 ? 0 : (glyph + delta) & 0xffff;
    }
    return 0;
  };
}
