// Tiny DOM builders: elements are made with createElement and filled with
// textContent, never innerHTML, so no text can become markup.
const SVG_NS = 'http://www.w3.org/2000/svg';

function build(element, props, children) {
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'text') element.textContent = String(value);
    else if (key === 'class') element.setAttribute('class', value);
    else if (key.startsWith('on')) element.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(element.dataset, value);
    else element.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

export function h(tag, props, ...children) {
  return build(document.createElement(tag), props, children);
}

export function s(tag, props, ...children) {
  return build(document.createElementNS(SVG_NS, tag), props, children);
}

export function clear(element) {
  element.replaceChildren();
  return element;
}
