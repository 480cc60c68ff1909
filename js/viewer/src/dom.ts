// The page's elements by id: a missing one is a bug of index.html, named at once.

export function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (e === null) throw new Error(`#${id} missing`);
  return e as T;
}
