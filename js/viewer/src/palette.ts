// The custom palette (spec 07 H.6): colour stops at positions 0…1, made into
// the same 256-entry RGB table as the built-in colour maps, and the editor
// under the toolbar that changes them. Seeded with 5 colours of the palette
// in use; a click on the bar adds a stop, a handle is dragged to move it,
// clicked to pick its colour, right-clicked to delete it (at least 2 stay).
// In contour mode every stop is one band of its own colour.

export type Rgb = [number, number, number];

export interface Stop {
  /** Position on the scale, 0 (min) … 1 (max). */
  t: number;
  rgb: Rgb;
}

export const MIN_STOPS = 2;

function sorted(stops: readonly Stop[]): Stop[] {
  return [...stops].sort((a, b) => a.t - b.t);
}

/** The colour at t (0…1) of the stops, linearly interpolated, flat beyond the ends. */
export function colourAt(stops: readonly Stop[], t: number): Rgb {
  const s = sorted(stops);
  if (s.length === 0) return [0, 0, 0];
  if (t <= s[0]!.t) return [...s[0]!.rgb];
  for (let k = 1; k < s.length; k++) {
    const b = s[k]!;
    if (t <= b.t) {
      const a = s[k - 1]!;
      const f = b.t > a.t ? (t - a.t) / (b.t - a.t) : 1;
      return [0, 1, 2].map((c) => Math.round(a.rgb[c]! + (b.rgb[c]! - a.rgb[c]!) * f)) as Rgb;
    }
  }
  return [...s[s.length - 1]!.rgb];
}

/**
 * 256 RGB triplets of the stops: interpolated, or (stepped, for contour mode)
 * one equal run of entries per stop in position order, so that band k of
 * `stops.length` bands is drawn in the colour of stop k.
 */
export function stopsTable(stops: readonly Stop[], stepped: boolean): Uint8Array {
  const s = sorted(stops);
  const table = new Uint8Array(256 * 3);
  for (let i = 0; i < 256; i++) {
    const rgb = stepped ? s[Math.min(Math.floor((i * s.length) / 256), s.length - 1)]!.rgb : colourAt(s, i / 255);
    table.set(rgb, 3 * i);
  }
  return table;
}

/** `n` stops, evenly spaced, with the colours of a 256-entry table at those places. */
export function seedStops(table: Uint8Array, n = 5): Stop[] {
  return Array.from({ length: n }, (_, k) => {
    const t = k / (n - 1);
    const i = 3 * Math.round(t * 255);
    return { t, rgb: [table[i]!, table[i + 1]!, table[i + 2]!] as Rgb };
  });
}

export function hex(rgb: Rgb): string {
  return "#" + rgb.map((c) => c.toString(16).padStart(2, "0")).join("");
}

export function parseHex(s: string): Rgb | undefined {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(s);
  return m === null ? undefined : [parseInt(m[1]!, 16), parseInt(m[2]!, 16), parseInt(m[3]!, 16)];
}

/**
 * The editor: a gradient bar with one handle per stop. It owns the stops and
 * calls `changed` after every edit.
 */
export class PaletteEditor {
  stops: Stop[] = [];
  private readonly bar: HTMLCanvasElement;
  private readonly handles: HTMLElement;
  private readonly picker: HTMLInputElement;
  private picking = -1;

  constructor(readonly root: HTMLElement, private readonly changed: () => void) {
    this.bar = root.querySelector("canvas")!;
    this.handles = root.querySelector(".handles")!;
    this.picker = root.querySelector('input[type="color"]')!;
    this.bar.addEventListener("click", (e) => {
      const t = this.position(e.clientX);
      this.stops.push({ t, rgb: colourAt(this.stops, t) });
      this.update();
    });
    this.picker.addEventListener("input", () => {
      const rgb = parseHex(this.picker.value);
      const s = this.stops[this.picking];
      if (rgb === undefined || s === undefined) return;
      s.rgb = rgb;
      this.update();
    });
  }

  /** Starts editing from `stops` (a copy is kept). */
  set(stops: readonly Stop[]): void {
    this.stops = stops.map((s) => ({ t: s.t, rgb: [...s.rgb] as Rgb }));
    this.render();
  }

  private position(clientX: number): number {
    const r = this.bar.getBoundingClientRect();
    return Math.min(1, Math.max(0, r.width > 0 ? (clientX - r.left) / r.width : 0));
  }

  private update(): void {
    this.render();
    this.changed();
  }

  private render(): void {
    const ctx = this.bar.getContext("2d");
    if (ctx !== null) {
      const table = stopsTable(this.stops, false);
      const img = ctx.createImageData(256, 1);
      for (let i = 0; i < 256; i++) img.data.set([table[3 * i]!, table[3 * i + 1]!, table[3 * i + 2]!, 255], 4 * i);
      this.bar.width = 256;
      this.bar.height = 1;
      ctx.putImageData(img, 0, 0);
    }
    this.root.dataset["stops"] = JSON.stringify(sorted(this.stops).map((s) => [Number(s.t.toFixed(4)), hex(s.rgb)]));
    this.handles.replaceChildren(...this.stops.map((s, k) => this.handle(s, k)));
  }

  private handle(s: Stop, k: number): HTMLElement {
    const h = document.createElement("button");
    h.className = "stop";
    h.type = "button";
    h.title = "drag to move, click to pick a colour, right-click to delete";
    h.style.left = `${s.t * 100}%`;
    h.style.background = hex(s.rgb);
    h.dataset["index"] = String(k);
    let start: number | undefined;
    let moved = false;
    h.addEventListener("pointerdown", (e) => {
      if (e.button !== 0) return;
      start = e.clientX;
      moved = false;
      h.setPointerCapture(e.pointerId);
    });
    h.addEventListener("pointermove", (e) => {
      if (start === undefined || (!moved && Math.abs(e.clientX - start) < 3)) return;
      moved = true;
      s.t = this.position(e.clientX);
      h.style.left = `${s.t * 100}%`;
    });
    h.addEventListener("pointerup", () => {
      if (start === undefined) return;
      start = undefined;
      if (moved) {
        this.update();
        return;
      }
      this.picking = k;
      this.picker.value = hex(s.rgb);
      this.picker.click();
    });
    h.addEventListener("click", (e) => e.stopPropagation());
    h.addEventListener("contextmenu", (e) => {
      e.preventDefault();
      if (this.stops.length <= MIN_STOPS) return;
      this.stops.splice(k, 1);
      this.update();
    });
    return h;
  }
}
