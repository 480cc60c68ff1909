// The page's frame around the map (spec 07 H.5, H.12): the sidebar's width
// dragged by its edge (280…600 px), the phone layout's bottom sheet and its
// minimised colour controls, and the display options (coastlines, grid lines)
// remembered in the browser.

import { $ } from "./dom.js";
import type { MapView } from "./map.js";
import { BottomSheet, PHONE_QUERY } from "./sheet.js";

const SIDEBAR_MIN = 280;
const SIDEBAR_MAX = 600;
const LINE_KEYS = { coastlines: "tensogram.viewer.coastlines", graticule: "tensogram.viewer.graticule" } as const;

function bindSidebarEdge(): void {
  const body = document.body;
  const edge = $("sidebar-resize");
  let from: { x: number; w: number } | undefined;
  edge.addEventListener("pointerdown", (e) => {
    from = { x: e.clientX, w: $("sidebar").getBoundingClientRect().width };
    edge.setPointerCapture(e.pointerId);
    body.dataset["resizing"] = "yes";
  });
  edge.addEventListener("pointermove", (e) => {
    if (from === undefined) return;
    const w = Math.round(Math.max(SIDEBAR_MIN, Math.min(SIDEBAR_MAX, from.w + e.clientX - from.x)));
    body.style.setProperty("--sidebar-w", `${w}px`);
  });
  const end = () => {
    from = undefined;
    delete body.dataset["resizing"];
  };
  edge.addEventListener("pointerup", end);
  edge.addEventListener("pointercancel", end);
}

/** The colour controls: shown on wide screens, behind the *Colours* button on phones. */
function bindColourControls(): void {
  const body = document.body;
  const toggle = $<HTMLButtonElement>("controls-toggle");
  const setOpen = (open: boolean) => {
    body.dataset["controls"] = open ? "open" : "min";
    toggle.setAttribute("aria-expanded", String(open));
  };
  const phone = window.matchMedia(PHONE_QUERY);
  setOpen(!phone.matches);
  phone.addEventListener("change", () => setOpen(!phone.matches));
  toggle.addEventListener("click", () => setOpen(body.dataset["controls"] !== "open"));
}

function storedFlag(key: string): boolean {
  try {
    return localStorage.getItem(key) !== "off";
  } catch {
    return true; // storage refused (private mode, file://): the defaults
  }
}

function bindDisplayOptions(map: MapView): void {
  const boxes = { coastlines: $<HTMLInputElement>("show-coastlines"), graticule: $<HTMLInputElement>("show-graticule") };
  const apply = () => map.setLines({ coastlines: boxes.coastlines.checked, graticule: boxes.graticule.checked });
  for (const k of ["coastlines", "graticule"] as const) {
    boxes[k].checked = storedFlag(LINE_KEYS[k]);
    boxes[k].addEventListener("change", () => {
      try {
        localStorage.setItem(LINE_KEYS[k], boxes[k].checked ? "on" : "off");
      } catch {
        // not remembered; still applied
      }
      apply();
    });
  }
  apply();
}

/** Binds the frame's controls; the sheet is opened to half by the page when a file is loaded. */
export function bindLayout(map: MapView): { sheet: BottomSheet } {
  bindSidebarEdge();
  bindColourControls();
  bindDisplayOptions(map);
  return { sheet: new BottomSheet($("sidebar"), $("sheet-handle")) };
}
