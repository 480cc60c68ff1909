// The pure parts of the viewer, without a browser: grids and the field index.

import { test } from "node:test";
import assert from "node:assert/strict";
import { gridFromCoords, gridFromMetadata, nearestIndex, pointOf } from "../src/geo.js";
import { groupFields, objectName } from "../src/grouping.js";
import { bruteNearest, fibonacci } from "./points.js";

test("regular_ll with the default area goes once round the globe", () => {
  const g = gridFromMetadata({ mars: { grid: "regular_ll" } }, [181, 360])!;
  assert.equal(g.kind, "regular");
  assert.deepEqual([g.lat0, g.dlat, g.lon0, g.dlon, g.global], [90, -1, -180, 1, true]);
  assert.deepEqual(nearestIndex(g, 0, 179.6), { i: 90, j: 0 }, "wraps to -180");
  assert.deepEqual(nearestIndex(g, -90, -180), { i: 180, j: 0 });
  assert.equal(nearestIndex(g, -90.6, 0), undefined);
  assert.deepEqual(pointOf(g, 90, 359), { lat: 0, lon: 179 });
});

test("MARS increments: global from 0°E", () => {
  const g = gridFromMetadata({ mars: { grid: "0.25/0.25" } }, [721, 1440])!;
  assert.equal(g.kind, "regular");
  assert.deepEqual([g.lat0, g.dlat, g.lon0, g.dlon, g.global], [90, -0.25, 0, 0.25, true]);
  assert.equal(nearestIndex(g, 0, -0.1)!.j, 0);
  assert.equal(nearestIndex(g, 0, -0.2)!.j, 1439);
  assert.equal(nearestIndex(g, 0, 180)!.j, 720);
});

test("a regional area, also across the date line", () => {
  const g = gridFromMetadata({ mars: { grid: "regular_ll", area: [60, -30, 20, 40] } }, [41, 71])!;
  assert.equal(g.kind === "regular" && g.global, false);
  assert.deepEqual(nearestIndex(g, 60, -30.4), { i: 0, j: 0 });
  assert.deepEqual(nearestIndex(g, 20, 40), { i: 40, j: 70 });
  assert.equal(nearestIndex(g, 30, 41), undefined);
  assert.equal(nearestIndex(g, 30, -31), undefined);
  const d = gridFromMetadata({ mars: { grid: "regular_ll", area: [10, 170, -10, 190] } }, [21, 21])!;
  assert.deepEqual(nearestIndex(d, 0, -175), { i: 10, j: 15 });
  assert.equal(pointOf(d, 10, 15).lon, -175);
});

test("no grid keys: only an exact global shape is assumed", () => {
  const g = gridFromMetadata({}, [91, 180])!;
  assert.ok(g.kind === "regular" && g.note !== undefined);
  assert.equal(gridFromMetadata({}, [90, 180]), undefined);
  assert.equal(gridFromMetadata({ mars: { grid: "O1280" } }, [10, 20]), undefined);
  assert.equal(gridFromMetadata({ mars: { grid: "regular_ll" } }, [10]), undefined);
});

test("coordinate arrays: 1-D axes or per-point arrays", () => {
  const lat = Float64Array.from([50, 40, 30]);
  const lon = Float64Array.from([350, 0, 10, 20]);
  const g = gridFromCoords(lat, lon, [3, 4])!;
  assert.deepEqual(nearestIndex(g, 41, -9), { i: 1, j: 0 }, "350°E is 10°W");
  const plat = new Float64Array(12);
  const plon = new Float64Array(12);
  for (let i = 0; i < 3; i++) for (let j = 0; j < 4; j++) (plat[i * 4 + j] = lat[i]!), (plon[i * 4 + j] = lon[j]!);
  assert.deepEqual(nearestIndex(gridFromCoords(plat, plon, [3, 4])!, 30, 19), { i: 2, j: 3 });
  assert.equal(gridFromCoords(lat, lon, [4, 3]), undefined);
});

test("the field index: names, coordinates, groups by param, level and step", () => {
  assert.equal(objectName({ name: "x", mars: { param: "2t" } }, 3), "x");
  assert.equal(objectName({ mars: { param: "2t" } }, 3), "2t");
  assert.equal(objectName({ mars: { param: 167 } }, 3), "object_3");
  const f = (msg: number, meta: Record<string, unknown>, coordinate = false) => ({ msg, obj: 0, name: objectName(meta, 0), meta, coordinate });
  const fields = [
    f(0, { mars: { param: "t", levtype: "pl", levelist: 850, step: 12 } }),
    f(1, { mars: { param: "t", levtype: "pl", levelist: 500, step: 6 } }),
    f(2, { mars: { param: "t", levtype: "pl", levelist: 850, step: 0 } }),
    f(3, { mars: { param: 167, levtype: "sfc", levelist: 1, step: 0 }, units: "K" }),
    f(4, { name: "latitude" }, true),
  ];
  const groups = groupFields(fields);
  assert.deepEqual(groups.map((g) => g.param), ["167", "t"]);
  assert.deepEqual(groups[0]!.levels.map((l) => l.level), [undefined], "sfc has no level");
  assert.equal(groups[0]!.units, "K");
  const t = groups[1]!;
  assert.deepEqual(t.levels.map((l) => l.level), [500, 850]);
  assert.deepEqual(t.levels[1]!.frames.map((x) => x.msg), [2, 0], "by step");
  assert.equal(t.steps, 3);
  assert.deepEqual(groupFields(fields, "500").map((g) => g.param), ["t"]);
});

test("scattered points: the nearest point, as a brute-force search finds it", () => {
  const { lat, lon } = fibonacci(5000);
  const g = gridFromCoords(lat, lon, [5000])!;
  assert.equal(g.kind, "points");
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let q = 0; q < 2000; q++) {
    const la = -80 + 160 * rand();
    const lo = -180 + 360 * rand();
    const best = bruteNearest(lat, lon, la, lo);
    assert.equal(nearestIndex(g, la, lo)?.i, best, `query ${la}, ${lo}`);
  }
  // Per-point arrays of a 2-D field that are not rectilinear are points too.
  assert.equal(gridFromCoords(lat.subarray(0, 12), lon.subarray(0, 12), [3, 4])?.kind, "points");
});
