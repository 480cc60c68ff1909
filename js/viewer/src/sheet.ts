// The phone layout's bottom sheet (spec 07 H.12): below 768 px the sidebar is
// a sheet over the bottom of the map with three heights — collapsed (28 px,
// only its handle), half (50 % of the screen) and full (90 %) — dragged by its
// handle with mouse or finger. A drag shorter than 60 px keeps the height,
// one longer than 120 px skips a level. It opens to half when a file has
// been loaded.

export const SNAPS = ["collapsed", "half", "full"] as const;
export type Snap = (typeof SNAPS)[number];

export const IGNORE_PX = 60;
export const SKIP_PX = 120;

/** The height after a drag of `up` pixels (negative: down) from `from`. */
export function snapAfterDrag(from: Snap, up: number): Snap {
  const d = Math.abs(up);
  if (d < IGNORE_PX) return from;
  const levels = d > SKIP_PX ? 2 : 1;
  const k = SNAPS.indexOf(from) + Math.sign(up) * levels;
  return SNAPS[Math.max(0, Math.min(SNAPS.length - 1, k))]!;
}

export const PHONE_QUERY = "(max-width: 767px)";

/** Binds the handle; the height is <body data-sheet="…">, the live drag the body's --sheet-drag. */
export class BottomSheet {
  constructor(private readonly sheet: HTMLElement, handle: HTMLElement) {
    this.set("collapsed");
    let startY: number | undefined;
    let startHeight = 0;
    handle.addEventListener("pointerdown", (e) => {
      startY = e.clientY;
      startHeight = sheet.getBoundingClientRect().height;
      handle.setPointerCapture(e.pointerId);
      document.body.dataset["sheetDragging"] = "yes";
    });
    handle.addEventListener("pointermove", (e) => {
      if (startY === undefined) return;
      const h = Math.max(28, Math.min(window.innerHeight * 0.9, startHeight + startY - e.clientY));
      document.body.style.setProperty("--sheet-drag", `${h}px`);
    });
    const end = (e: PointerEvent) => {
      if (startY === undefined) return;
      const up = startY - e.clientY;
      startY = undefined;
      delete document.body.dataset["sheetDragging"];
      document.body.style.removeProperty("--sheet-drag");
      this.set(snapAfterDrag(this.current, up));
    };
    handle.addEventListener("pointerup", end);
    handle.addEventListener("pointercancel", end);
  }

  get current(): Snap {
    const s = document.body.dataset["sheet"];
    return (SNAPS as readonly string[]).includes(s ?? "") ? (s as Snap) : "collapsed";
  }

  set(s: Snap): void {
    document.body.dataset["sheet"] = s;
  }
}
