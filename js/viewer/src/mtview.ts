// Metatensor (and plain safetensors) files: the tensor list, flat tensors
// drawn as images (2-D, or the first 2-D slice of more) or line plots (1-D),
// and struct, string and ragged tensors as a paged table.

import type { Decoder } from "./client.js";
import { colourIndex, colourTable, finiteRange, formatValue } from "./colour.js";
import type { MtIndex, MtTensor } from "./protocol.js";

export const PAGE_ROWS = 50;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, cls?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls !== undefined) e.className = cls;
  return e;
}

export class MetatensorView {
  constructor(
    private readonly decoder: Decoder,
    private readonly list: HTMLElement,
    private readonly view: HTMLElement,
    private readonly meta: HTMLElement,
    private readonly onError: (msg: string) => void,
    private readonly onBusy: (busy: boolean) => void,
  ) {}

  show(index: MtIndex): void {
    this.list.replaceChildren();
    const n = index.tensors.length;
    const head = el("div", `${n} tensor${n === 1 ? "" : "s"} (${index.format})`, "group-head");
    this.list.append(head);
    for (const t of index.tensors) {
      const row = el("div", undefined, "row");
      row.dataset["tensor"] = t.name;
      row.append(el("span", t.name), el("span", `${t.kind === "records" ? "struct" : t.dtype} [${t.shape.join("×")}]`, "sub"));
      row.addEventListener("click", () => {
        for (const r of this.list.querySelectorAll(".row.selected")) r.classList.remove("selected");
        row.classList.add("selected");
        void this.open(t);
      });
      this.list.append(row);
    }
    this.meta.textContent = JSON.stringify(index.metadata, null, 2);
    this.view.hidden = false;
    this.view.replaceChildren(el("p", "Choose a tensor in the list.", "hint"));
  }

  private async open(t: MtTensor): Promise<void> {
    this.meta.textContent = JSON.stringify({ name: t.name, kind: t.kind, dtype: t.dtype, shape: t.shape, columns: t.columns }, null, 2);
    this.onBusy(true);
    try {
      if ((t.kind === "flat" || t.kind === "raw") && t.shape.length >= 1 && t.shape.every((d) => d > 0)) await this.flat(t);
      else await this.table(t, 0);
    } catch (e) {
      this.onError((e as Error).message);
    } finally {
      this.onBusy(false);
    }
  }

  private async flat(t: MtTensor): Promise<void> {
    const d = await this.decoder.mtFlat(t.name);
    showArray(this.view, `${t.name}: ${t.dtype} [${d.shape.join(" × ")}]`, d.shape, d.values);
  }

  private async table(t: MtTensor, start: number): Promise<void> {
    const page = await this.decoder.mtPage(t.name, start, PAGE_ROWS);
    const table = el("table");
    const head = el("tr");
    head.append(el("th", "#"), ...page.columns.map((c) => el("th", c)));
    table.append(head);
    page.rows.forEach((cells, k) => {
      const tr = el("tr");
      tr.append(el("td", String(start + k)), ...cells.map((x) => el("td", x)));
      table.append(tr);
    });
    const pager = el("div", undefined, "pager");
    const prev = el("button", "◀ previous");
    const next = el("button", "next ▶");
    prev.disabled = start === 0;
    next.disabled = start + PAGE_ROWS >= page.total;
    prev.addEventListener("click", () => void this.table(t, Math.max(0, start - PAGE_ROWS)).catch((e: Error) => this.onError(e.message)));
    next.addEventListener("click", () => void this.table(t, start + PAGE_ROWS).catch((e: Error) => this.onError(e.message)));
    const last = Math.min(page.total, start + PAGE_ROWS);
    pager.append(prev, el("span", `rows ${page.total === 0 ? 0 : start + 1}–${last} of ${page.total}`), next);
    this.view.replaceChildren(el("h3", `${t.name}: ${t.kind === "records" ? "struct" : t.dtype} [${t.shape.join(" × ")}]`), pager, table);
    this.view.dataset["kind"] = "table";
  }
}

function linePlot(v: ArrayLike<number>, r: { min: number; max: number }): HTMLCanvasElement {
  const c = el("canvas");
  const w = 800;
  const h = 300;
  c.width = w;
  c.height = h;
  const ctx = c.getContext("2d")!;
  ctx.fillStyle = "#11141a";
  ctx.fillRect(0, 0, w, h);
  ctx.strokeStyle = "#5aa9ff";
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  const span = r.max > r.min ? r.max - r.min : 1;
  for (let i = 0; i < v.length; i++) {
    const x = v.length > 1 ? 10 + ((w - 20) * i) / (v.length - 1) : w / 2;
    const y = h - 10 - ((h - 20) * (v[i]! - r.min)) / span;
    if (i === 0) ctx.moveTo(x, y);
    else ctx.lineTo(x, y);
  }
  ctx.stroke();
  return c;
}

/** Values listed under a plot or an image when there are few of them. */
const LIST_VALUES = 64;

/**
 * A tensor that is not drawn on a map: a 1-D line plot, a 2-D image (the
 * last two dimensions; the first slice of more), a scalar as text; small
 * tensors also list their values.
 */
export function showArray(view: HTMLElement, title: string, shape: readonly number[], values: ArrayLike<number>): void {
  const r = finiteRange(values);
  const parts: HTMLElement[] = [el("h3", title), el("p", `min ${formatValue(r.min)}, max ${formatValue(r.max)}, ${values.length} values`, "hint")];
  if (shape.length <= 1 || values.length <= 1) {
    if (values.length > 1) parts.push(linePlot(values, r));
    view.dataset["kind"] = "plot";
  } else {
    const rows = shape[shape.length - 2]!;
    const cols = shape[shape.length - 1]!;
    if (shape.length > 2) parts.push(el("p", `first ${rows} × ${cols} slice of ${shape.length} dimensions`, "hint"));
    const c = el("canvas");
    c.width = cols;
    c.height = rows;
    c.style.width = `${Math.min(800, Math.max(cols, 256))}px`;
    const ctx = c.getContext("2d")!;
    const img = ctx.createImageData(cols, rows);
    const scale = { table: colourTable("viridis"), min: r.min, max: r.max, bands: 0 };
    for (let k = 0; k < rows * cols; k++) {
      const ci = colourIndex(scale, values[k]!);
      if (ci >= 0) img.data.set([scale.table[3 * ci]!, scale.table[3 * ci + 1]!, scale.table[3 * ci + 2]!, 255], 4 * k);
    }
    ctx.putImageData(img, 0, 0);
    parts.push(c);
    view.dataset["kind"] = "image";
  }
  if (values.length <= LIST_VALUES) {
    parts.push(el("pre", Array.from({ length: values.length }, (_, k) => formatValue(values[k]!)).join(" ")));
  }
  view.replaceChildren(...parts);
  view.hidden = false;
}
