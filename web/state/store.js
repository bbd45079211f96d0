// One store for the page: the calculator's {catalog, spec, result, errors,
// status, banner, localErrors}, the open tab, the pinned configs, and the
// search / what-if runs. Views subscribe and re-render from it; inputs
// write to it.
import { defaultSearchInputs } from './search_spec.js';

export function createStore(initial) {
  let state = initial;
  const listeners = new Set();
  return {
    get: () => state,
    set(patch) {
      const previous = state;
      state = { ...state, ...patch };
      for (const listener of listeners) listener(state, previous);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

// The page's store, shared by main.js and the views (and reachable from the
// browser tests through `import('./state/store.js')`).
export const store = createStore({
  catalog: null,      // {version, models: [{id, label, doc}], systems: [...], schema} (engine/catalog.js)
  spec: null,         // see config.js
  result: null,       // result object of the last ok envelope
  errors: [],         // [{path, message}] of the last error envelope
  localErrors: {},    // {fieldPath: message} for text the form could not read
  edited: null,       // the path of the field edited last (its errors come first)
  status: 'loading',  // 'loading' | 'computing' | 'ready' | 'failed'
  banner: null,       // {title, items: [text], kind: 'warn' | 'notes'}
  view: 'calc',       // the open tab: 'calc' | 'search' | 'whatif' | 'compare' (in the URL)
  pins: [],           // pinned specs for Compare (in the URL), at most 4
  pinResults: [],     // their estimate envelopes (null while computing), in pin order
  searchInputs: defaultSearchInputs(),  // the Search tab's form (search_spec.js)
  searchQuery: null,  // the inputs of the search last run (in the URL with view=search: q=…)
  search: { status: 'idle' },  // {status, done, total, best, startedAt, document, envelope, elapsedMs} (engine/runs.js)
  searchSystem: null, // {label, figure, factor}: scale the system for the next searches (from What-if)
  whatif: { status: 'idle' },  // {status, result, errors, spec}
});
