// One store for the page: {catalog, spec, result, errors, status, banner,
// localErrors}. Views subscribe and re-render from it; inputs write to it.
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
// browser tests through `import('./store.js')`).
export const store = createStore({
  catalog: null,      // {version, models: [{id, label, doc}], systems: [...]}
  spec: null,         // see config.js
  result: null,       // result object of the last ok envelope
  errors: [],         // [{path, message}] of the last error envelope
  localErrors: {},    // {fieldPath: message} for text the form could not read
  status: 'loading',  // 'loading' | 'computing' | 'ready' | 'failed'
  banner: null,       // {title, items: [text]}
});
