// The page's charts as files: SVG (the chart's own markup with the colours
// its stylesheet gives it written in, so it looks the same anywhere) and
// PNG (that SVG drawn on a canvas through an <img>: no innerHTML, no data
// in markup).
const STYLE_PROPS = ['fill', 'fill-opacity', 'stroke', 'stroke-width', 'stroke-dasharray', 'stroke-opacity', 'opacity',
  'font-family', 'font-size', 'font-weight', 'font-variant-numeric'];
const SVG_NS = 'http://www.w3.org/2000/svg';

// A standalone copy of `svg` with computed styles as attributes and a
// background, and its size in CSS pixels.
export function standaloneSvg(svg) {
  const clone = svg.cloneNode(true);
  const source = [svg, ...svg.querySelectorAll('*')];
  const copies = [clone, ...clone.querySelectorAll('*')];
  source.forEach((element, i) => {
    const style = getComputedStyle(element);
    for (const prop of STYLE_PROPS) {
      const value = style.getPropertyValue(prop);
      if (value) copies[i].setAttribute(prop, value);
    }
    copies[i].removeAttribute('class');
    copies[i].removeAttribute('tabindex');
  });
  const width = Number(svg.getAttribute('width')) || svg.viewBox.baseVal.width || svg.getBoundingClientRect().width;
  const height = Number(svg.getAttribute('height')) || svg.viewBox.baseVal.height || svg.getBoundingClientRect().height;
  clone.setAttribute('xmlns', SVG_NS);
  clone.setAttribute('width', String(width));
  clone.setAttribute('height', String(height));
  const panel = svg.closest('.panel') ?? document.body;
  const background = document.createElementNS(SVG_NS, 'rect');
  background.setAttribute('width', '100%');
  background.setAttribute('height', '100%');
  background.setAttribute('fill', getComputedStyle(panel).backgroundColor || '#ffffff');
  clone.insertBefore(background, clone.firstChild);
  return { clone, width, height };
}

export function svgText(svg) {
  const { clone } = standaloneSvg(svg);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(clone)}\n`;
}

// Resolves with a PNG Blob at `scale` times the chart's size.
export async function pngBlob(svg, scale = 2) {
  const { clone, width, height } = standaloneSvg(svg);
  const image = new Image();
  image.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(new XMLSerializer().serializeToString(clone))}`;
  await image.decode();
  const canvas = document.createElement('canvas');
  const limit = 16000 / Math.max(width, height);
  const k = Math.min(scale, limit);
  canvas.width = Math.round(width * k);
  canvas.height = Math.round(height * k);
  const context = canvas.getContext('2d');
  context.drawImage(image, 0, 0, canvas.width, canvas.height);
  return new Promise((resolve, reject) => canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('the PNG could not be made'))), 'image/png'));
}
