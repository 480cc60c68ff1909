// Test data shared by the browser and the plain tests.

/** Points spread evenly over the sphere (a Fibonacci lattice). */
export function fibonacci(n: number): { lat: Float64Array; lon: Float64Array } {
  const lat = new Float64Array(n);
  const lon = new Float64Array(n);
  const golden = Math.PI * (3 - Math.sqrt(5));
  for (let k = 0; k < n; k++) {
    lat[k] = (Math.asin(1 - (2 * (k + 0.5)) / n) * 180) / Math.PI;
    lon[k] = ((((k * golden * 180) / Math.PI) % 360) + 360) % 360 - 180;
  }
  return { lat, lon };
}

/** The point nearest (lat, lon) by squared degree distance, longitude wrapped (brute force). */
export function bruteNearest(lat: Float64Array, lon: Float64Array, la: number, lo: number): number {
  let best = -1;
  let bestD = Infinity;
  for (let k = 0; k < lat.length; k++) {
    const dl = Math.abs(((((lon[k]! - lo + 180) % 360) + 360) % 360) - 180);
    const d = (lat[k]! - la) ** 2 + dl * dl;
    if (d < bestD) (bestD = d), (best = k);
  }
  return best;
}
