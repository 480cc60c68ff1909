// JSON Pointer pieces for error locations (RFC 6901 escaping), shared by the
// writer and deep validation so both name a place the same way.

/** One escaped reference token, with its leading "/". */
export const tok = (t: string | number): string => "/" + String(t).replace(/~/g, "~0").replace(/\//g, "~1");

/** The pointer of flat element `i` of an array of shape `dims` (row-major). */
export function indexPointer(dims: readonly number[], i: number): string {
  const idx: number[] = [];
  for (let d = dims.length - 1; d >= 0; d--) {
    idx.unshift(i % dims[d]!);
    i = Math.floor(i / dims[d]!);
  }
  return idx.map(tok).join("");
}
