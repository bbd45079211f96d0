// Entry point. Starts the engine worker first, so the WASM module loads
// while the rest of the page's modules arrive, then hands over to app.js.
import { createEngine } from './engine/client.js';

const engine = createEngine();
const { start } = await import('./app.js');
start(engine);
