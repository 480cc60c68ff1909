// Our JSX runtime (`"jsxImportSource": "@tensogram/metatensor"`): elements
// are evaluated eagerly into layout nodes; function components are called
// with their props (children included), as the automatic runtime expects.
import type { LayoutNode } from "./jsx.js";

export type Child = LayoutNode | Child[] | null | undefined | false;
type Component<P> = (props: P) => LayoutNode;

export const Fragment = (props: { children?: Child }): LayoutNode => ({ $$layout: "Fragment", props: {}, children: flattenChildren(props.children) });

export function flattenChildren(c: unknown): LayoutNode[] {
  if (c === null || c === undefined || c === false) return [];
  if (Array.isArray(c)) return c.flatMap(flattenChildren);
  const n = c as LayoutNode;
  if (n.$$layout === "Fragment") return n.children;
  return [n];
}

export function jsx<P>(type: Component<P>, props: P, _key?: unknown): LayoutNode {
  if (typeof type !== "function") throw new TypeError("metatensor layouts have no intrinsic elements; use Struct, Field, Tensor, Blob, ArrayOf");
  return type(props);
}
export const jsxs = jsx;
export const jsxDEV = jsx;

// eslint-disable-next-line @typescript-eslint/no-namespace
export namespace JSX {
  export type Element = LayoutNode;
  export interface ElementChildrenAttribute {
    children: unknown;
  }
  // eslint-disable-next-line @typescript-eslint/no-empty-interface
  export interface IntrinsicElements {}
}
