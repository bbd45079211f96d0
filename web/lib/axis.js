// Axis helpers shared by the charts: round tick steps and sizes in pixels.
export function niceTicks(max, count = 5) {
  if (!(max > 0)) return [0];
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const ticks = [];
  for (let v = 0; v <= max * 1.0001; v += step) ticks.push(v);
  return ticks;
}

// The width to draw at: the element's own width, with a floor for layout.
export function chartWidth(element, fallback = 600) {
  return Math.max(260, Math.floor(element.clientWidth || fallback));
}

// Re-renders when the element's width changes (rotation, window resize).
export function onResize(element, render) {
  let width = 0;
  new ResizeObserver(() => {
    const now = Math.floor(element.clientWidth);
    if (now !== width) {
      width = now;
      render();
    }
  }).observe(element);
}
