// Saving a file from the page: a Blob behind a temporary object URL and a
// download link, clicked once.
import { h } from './dom.js';

export function saveBlob(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function saveText(text, name, type) {
  saveBlob(new Blob([text], { type }), name);
}
