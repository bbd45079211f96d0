// The configuration form: model, training and system groups built from the
// fields (state/fields.js: the page's layout joined with the core's schema).
// Inputs write the spec through actions.setSpec; the form renders values,
// preset overrides and errors from the store. An error is shown next to the
// field its path names (longest matching prefix), or in the list at the top
// when no field matches. The field edited last is marked, and when the
// change broke a rule that names another field, it says so and links there.
// Clearing a field means "its default": the preset's value, the core's
// default, or the page's default view (shown as the placeholder); a field
// with none of these asks for a value instead of sending an incomplete config.
import { h } from '../lib/dom.js';
import { CUSTOM_MODEL, FIELDS, fieldByKey, formatText, parseText } from '../state/fields.js';
import { TRAINING_GROUPS } from '../state/layout.js';
import { clip } from '../lib/format.js';
import { cloneSpec, defaultSpec, effectiveSection, getDeep, presetValue, sectionAsOverrides } from '../state/config.js';
import { derivedSizes } from '../state/verdict.js';

const fieldId = (path) => `f${path.replace(/\//g, '-')}`;

export function mount(form, store, actions) {
  const slots = new Map();  // path -> {field, root, input(s), error, reset}
  let built = false;

  form.addEventListener('submit', (event) => event.preventDefault());
  const generalErrors = h('ul', { class: 'form-errors', role: 'alert', hidden: true });

  let ownSpec = null;  // the spec this form wrote last; other specs come from links or imports
  function write(mutate, commit) {
    const spec = cloneSpec(store.get().spec);
    mutate(spec);
    ownSpec = spec;
    actions.setSpec(spec, { commit });
  }

  function setLocalError(path, message) {
    const localErrors = { ...store.get().localErrors };
    if (message) localErrors[path] = message;
    else delete localErrors[path];
    store.set({ localErrors });
  }

  // Stores a parsed value; overrides equal to the preset value are dropped.
  function assign(spec, field, value) {
    if (field.section === 'training') {
      if (value === undefined) delete spec.training[field.key];
      else spec.training[field.key] = value;
      return;
    }
    const over = spec[field.section].over;
    const preset = presetValue(spec, field.section, field.key, store.get().catalog);
    if (value === undefined || (spec[field.section].preset !== CUSTOM_MODEL && JSON.stringify(value) === JSON.stringify(preset))) {
      delete over[field.key];
    } else {
      over[field.key] = value;
    }
  }

  // What an empty field stands for (undefined: the core's default or the preset's value).
  function fallback(field, spec) {
    if (field.section === 'training') {
      if (field.def !== undefined) return { value: undefined };
      if (field.key === 'num_micro_batches' || (field.key === 'global_batch_size' && spec.training.num_micro_batches !== undefined)) return { value: undefined };
      const value = defaultSpec(store.get().catalog).training[field.key];
      return value === undefined ? { missing: true } : { value };
    }
    if (spec[field.section].preset !== CUSTOM_MODEL && presetValue(spec, field.section, field.key, store.get().catalog) !== undefined) return { value: undefined };
    const value = defaultSpec(store.get().catalog)[field.section].over[field.key];
    if (value !== undefined) return { value };
    return field.def !== undefined ? { value: undefined } : { missing: true };
  }

  function onText(field, input, commit) {
    actions.setEdited(field.path);
    const parsed = parseText(field, input.value);
    if (!parsed.ok) {
      setLocalError(field.path, parsed.message);
      return;
    }
    if (parsed.value === undefined) {
      const empty = fallback(field, store.get().spec);
      if (empty.missing) {
        setLocalError(field.path, 'enter a value (this field has no preset or default value)');
        return;
      }
      parsed.value = empty.value;
    }
    if (store.get().localErrors[field.path]) setLocalError(field.path, '');
    write((spec) => {
      assign(spec, field, parsed.value);
      // Exactly one of global_batch_size / num_micro_batches.
      if (parsed.value !== undefined && field.key === 'global_batch_size') delete spec.training.num_micro_batches;
      if (parsed.value !== undefined && field.key === 'num_micro_batches') delete spec.training.global_batch_size;
    }, commit);
  }

  function onSection(field, checked) {
    write((spec) => {
      const over = spec[field.section].over;
      const inPreset = presetValue(spec, field.section, field.key, store.get().catalog) !== undefined;
      for (const key of Object.keys(over)) if (key.startsWith(`${field.key}.`) && !checked) delete over[key];
      if (spec[field.section].preset !== CUSTOM_MODEL && checked === inPreset) delete over[field.key];
      else over[field.key] = checked;
    }, true);
  }

  function onRecompute(value) {
    write((spec) => {
      const t = spec.training;
      if (value === 'none') delete t['recompute.granularity'];
      else t['recompute.granularity'] = value;
      if (value !== 'full') { delete t['recompute.method']; delete t['recompute.num_layers']; }
      if (value === 'full') { t['recompute.method'] ??= 'uniform'; t['recompute.num_layers'] ??= 1; }
      if (value !== 'selective') { delete t['recompute.modules']; delete t['recompute.keep_tail_outputs']; }
    }, true);
  }

  // CUDA graphs: the captured modules only go with "local" and "transformer_engine".
  function onCudaGraph(value) {
    write((spec) => {
      const t = spec.training;
      if (value === 'none') delete t['cuda_graph.impl'];
      else t['cuda_graph.impl'] = value;
      if (value === 'none' || value === 'full_iteration') delete t['cuda_graph.modules'];
    }, true);
  }

  function makeField(field) {
    const id = fieldId(field.path);
    const error = h('p', { class: 'field-error', id: `${id}-error`, hidden: true });
    const cause = h('p', { class: 'field-cause', id: `${id}-cause`, hidden: true });
    const root = h('div', { class: `field field-${field.type}`, dataset: { path: field.path } });
    const slot = { field, root, error, cause, input: null, boxes: null, reset: null };
    if (field.type === 'bool' || field.type === 'section') {
      const input = h('input', { type: 'checkbox', id, 'aria-describedby': error.id });
      input.addEventListener('change', () => {
        actions.setEdited(field.path);
        if (field.type === 'section') onSection(field, input.checked);
        else write((spec) => assign(spec, field, input.checked === (field.def ?? false) && field.section === 'training' ? undefined : input.checked), true);
      });
      root.append(h('label', { class: 'check', for: id }, input, h('span', { text: field.label, title: field.title })));
      slot.input = input;
    } else if (field.type === 'enum') {
      const input = h('select', { id, 'aria-describedby': error.id },
        field.values.map((v) => h('option', { value: String(v), text: String(v) })));
      input.addEventListener('change', () => {
        actions.setEdited(field.path);
        const value = parseText(field, input.value).value;
        if (field.key === 'recompute.granularity') onRecompute(value);
        else if (field.key === 'cuda_graph.impl') onCudaGraph(value);
        else write((spec) => assign(spec, field, field.section === 'training' && value === field.def ? undefined : value), true);
      });
      root.append(h('label', { for: id, text: field.label, title: field.title }), input);
      slot.input = input;
    } else if (field.type === 'list') {
      slot.boxes = field.values.map((value) => {
        const box = h('input', { type: 'checkbox', value, id: `${id}-${value}` });
        box.addEventListener('change', () => {
          actions.setEdited(field.path);
          const chosen = slot.boxes.filter((b) => b.checked).map((b) => b.value);
          write((spec) => assign(spec, field, chosen.length ? chosen : undefined), true);
        });
        return box;
      });
      root.append(h('fieldset', { class: 'checks', 'aria-describedby': error.id },
        h('legend', { text: field.label }),
        slot.boxes.map((box) => h('label', { class: 'check', for: box.id }, box, h('span', { text: box.value })))));
    } else {
      const numeric = field.type === 'int' || field.type === 'number';
      const input = h('input', {
        type: 'text', id, 'aria-describedby': error.id, spellcheck: 'false',
        inputmode: numeric ? (field.type === 'int' ? 'numeric' : 'decimal') : undefined,
      });
      input.addEventListener('input', () => onText(field, input, false));
      input.addEventListener('change', () => onText(field, input, true));
      input.addEventListener('blur', () => renderValues(store.get()));
      root.append(h('label', { for: id, text: field.label, title: field.title }), input);
      slot.input = input;
    }
    if (field.section !== 'training' && field.key !== 'num_gpus' && field.type !== 'section') {
      slot.reset = h('button', {
        type: 'button', class: 'reset', title: 'Back to the preset value', 'aria-label': `Reset ${field.label} to the preset value`, text: '↺', hidden: true,
        onclick: () => write((spec) => { delete spec[field.section].over[field.key]; }, true),
      });
      root.append(slot.reset);
    }
    root.append(error, cause);
    slots.set(field.path, slot);
    return root;
  }

  function presetPicker(kind) {
    const path = `/${kind}/preset`;
    const id = fieldId(path);
    const error = h('p', { class: 'field-error', id: `${id}-error`, hidden: true });
    const list = kind === 'model' ? store.get().catalog.models : store.get().catalog.systems;
    const input = h('select', { id, 'aria-describedby': error.id },
      list.map((p) => h('option', { value: p.id, text: p.label || p.id })),
      h('option', { value: CUSTOM_MODEL, text: kind === 'model' ? 'Custom model (no preset)' : 'Custom system (no preset)' }));
    input.addEventListener('change', () => write((spec) => {
      if (input.value === CUSTOM_MODEL) {
        // A custom model or system starts as a copy of the current one.
        spec[kind].over = sectionAsOverrides(spec, kind, store.get().catalog);
      } else {
        // Keep the GPU count, drop the overrides of the previous preset.
        spec[kind].over = kind === 'system' && spec.system.over.num_gpus !== undefined ? { num_gpus: spec.system.over.num_gpus } : {};
      }
      spec[kind].preset = input.value;
    }, true));
    const source = h('p', { class: 'preset-source' });
    const root = h('div', { class: 'field field-preset', dataset: { path } },
      h('label', { for: id, text: kind === 'model' ? 'Model preset' : 'GPU / system preset' }), input, error, source);
    slots.set(path, { field: { path, type: 'preset', kind }, root, input, error, source });
    return root;
  }

  const grid = (...children) => h('div', { class: 'grid' }, ...children);
  const group = (label, open, ...children) => h('details', { class: 'subgroup', open }, h('summary', { text: label }), ...children);

  function build() {
    const model = FIELDS.model;
    const sectionFields = (name) => model.filter((f) => f.key.startsWith(`${name}.`)).map(makeField);
    const rest = model.filter((f) => !f.main && f.type !== 'section' && !f.key.includes('.'));
    const toggle = (name) => {
      const field = fieldByKey('model', name);
      return field ? h('div', { class: 'section-toggle' }, makeField(field), grid(sectionFields(name))) : null;
    };
    const modelGroup = h('fieldset', { class: 'group', dataset: { section: 'model' } },
      h('legend', { text: 'Model' }),
      presetPicker('model'),
      grid(model.filter((f) => f.main).map(makeField)),
      group('Architecture details', false, grid(rest.map(makeField))),
      model.filter((f) => f.type === 'section').map((f) => toggle(f.key)));

    const trainingGroup = h('fieldset', { class: 'group', dataset: { section: 'training' } },
      h('legend', { text: 'Training strategy' }),
      TRAINING_GROUPS.map((g) => group(g.label, g.open,
        grid(FIELDS.training.filter((f) => f.group === g.id).map(makeField)))));

    const systemRest = FIELDS.system.filter((f) => !f.main);
    const systemGroup = h('fieldset', { class: 'group', dataset: { section: 'system' } },
      h('legend', { text: 'System' }),
      presetPicker('system'),
      grid(FIELDS.system.filter((f) => f.main).map(makeField)),
      group('GPU and network', false, grid(systemRest.map(makeField))));

    form.replaceChildren(generalErrors, modelGroup, trainingGroup, systemGroup);
    built = true;
  }

  function renderValues(state) {
    const { spec, catalog } = state;
    const effective = { model: effectiveSection(spec, 'model', catalog), system: effectiveSection(spec, 'system', catalog) };
    for (const slot of slots.values()) {
      const { field } = slot;
      if (field.type === 'preset') {
        const preset = spec[field.kind].preset;
        slot.input.value = preset;
        const doc = (field.kind === 'model' ? catalog.models : catalog.systems).find((p) => p.id === preset)?.doc;
        slot.source.textContent = doc?.sources?.length ? `Source: ${doc.sources[0]}` : '';
        slot.source.hidden = !doc?.sources?.length;
        continue;
      }
      const training = field.section === 'training';
      const value = training ? spec.training[field.key] : getDeep(effective[field.section], field.key);
      const overridden = !training && field.key in spec[field.section].over && field.key !== 'num_gpus';
      slot.root.classList.toggle('overridden', overridden && spec[field.section].preset !== CUSTOM_MODEL);
      if (slot.reset) slot.reset.hidden = !overridden || spec[field.section].preset === CUSTOM_MODEL;
      if (field.type === 'section') {
        slot.input.checked = value !== undefined && value !== null;
        continue;
      }
      if (field.type === 'bool') {
        slot.input.checked = value ?? field.def ?? false;
      } else if (field.type === 'list') {
        for (const box of slot.boxes) box.checked = (value ?? field.def ?? []).includes(box.value);
      } else if (field.type === 'enum') {
        slot.input.value = String(value ?? field.def ?? field.values[0]);
      } else {
        // Never rewrite the text someone is typing in (but do follow links and imports).
        const typing = document.activeElement === slot.input || state.localErrors[field.path] !== undefined;
        if (!typing || state.spec !== ownSpec) slot.input.value = formatText(field, value);
        slot.input.placeholder = placeholderOf(field, state);
      }
    }
    // Fields that only matter in some modes are hidden unless set.
    const t = spec.training;
    const show = (key, visible) => {
      const slot = slots.get(fieldByKey('training', key)?.path);
      if (slot) slot.root.hidden = !visible && t[key] === undefined;
    };
    show('recompute.method', t['recompute.granularity'] === 'full');
    show('recompute.num_layers', t['recompute.granularity'] === 'full');
    show('recompute.modules', t['recompute.granularity'] === 'selective');
    show('recompute.keep_tail_outputs', t['recompute.granularity'] === 'selective');
    show('cuda_graph.modules', ['local', 'transformer_engine'].includes(t['cuda_graph.impl']));
    show('fp8_recipe', t.dtype === 'fp8');
    show('fp8_param_gather', t.dtype === 'fp8' || t.dtype === 'fp4');
    for (const name of FIELDS.model.filter((f) => f.type === 'section').map((f) => f.key)) {
      const on = getDeep(effective.model, name) !== undefined;
      for (const slot of slots.values()) {
        if (slot.field.section === 'model' && slot.field.key?.startsWith(`${name}.`)) slot.root.hidden = !on;
      }
    }
  }

  function placeholderOf(field, state) {
    if (field.key === 'dp' && field.section === 'training') {
      const valid = state.result && state.errors.length === 0 && Object.keys(state.localErrors).length === 0;
      return valid && state.spec.training.dp === undefined ? `auto (${derivedSizes(state.spec, state.catalog).dp})` : 'auto';
    }
    if (field.placeholder) return field.placeholder;
    if (field.def !== undefined) return String(field.def);
    const empty = fallback(field, state.spec);
    return empty.value !== undefined ? String(empty.value) : '';
  }

  function slotFor(path) {
    let best = null;
    for (const [slotPath, slot] of slots) {
      if ((path === slotPath || path.startsWith(`${slotPath}/`)) && (!best || slotPath.length > best[0].length)) best = [slotPath, slot];
    }
    if (best) return best[1];
    if (path === '/model' || path === '/system') return slots.get(`${path}/preset`);
    return null;
  }

  function renderErrors(state) {
    const byslot = new Map();
    const general = [];
    const add = (path, message) => {
      const slot = slotFor(path);
      if (!slot) { general.push(`${path || 'config'}: ${message}`); return; }
      const exact = path === slot.field.path ? '' : `${path.slice(slot.field.path.length + 1)}: `;
      if (!byslot.has(slot)) byslot.set(slot, []);
      byslot.get(slot).push(`${exact}${message}`);
    };
    // Text the form cannot read supersedes the core's errors, which are about
    // the last readable value (typing "1k" passes through "1").
    const local = Object.entries(state.localErrors);
    for (const [path, message] of local) add(path, message);
    if (!local.length) for (const error of state.errors) add(String(error.path ?? ''), String(error.message ?? ''));
    for (const slot of slots.values()) {
      const messages = byslot.get(slot);
      slot.root.classList.toggle('invalid', Boolean(messages));
      slot.error.hidden = !messages;
      slot.error.textContent = messages ? messages.map((m) => clip(m, 300)).join('; ') : '';
      const inputs = slot.boxes ?? [slot.input];
      for (const input of inputs) input.setAttribute('aria-invalid', messages ? 'true' : 'false');
      if (messages) {
        slot.root.hidden = false;
        const details = slot.root.closest('details');
        if (details) details.open = true;
      }
    }
    // The field edited last: marked, and told about the rule its change broke elsewhere.
    const edited = state.edited ? slots.get(state.edited) : null;
    for (const slot of slots.values()) {
      slot.root.classList.toggle('edited', slot === edited);
      if (slot.cause) slot.cause.hidden = true;
    }
    const elsewhere = [...byslot.entries()].filter(([slot]) => slot !== edited);
    if (edited?.cause && !byslot.has(edited) && (elsewhere.length || general.length)) {
      const [slot, messages] = elsewhere[0] ?? [null, general];
      const target = slot?.root;
      const where = slot ? slot.field.label ?? slot.field.path : 'the list above';
      edited.cause.replaceChildren(`This change broke a rule: ${where}: ${clip(messages[0], 200)} `,
        // mousedown keeps the focus in the edited field: its blur would commit and redraw this line under the pointer.
        target ? h('button', { type: 'button', class: 'link', text: 'Go there', onmousedown: (event) => event.preventDefault(),
          onclick: () => actions.focusField(target) }) : '');
      edited.cause.hidden = false;
    }
    generalErrors.replaceChildren(...general.map((text) => h('li', { text: clip(text, 300) })));
    generalErrors.hidden = general.length === 0;
  }

  store.subscribe((state, previous) => {
    if (!state.catalog || !state.spec) return;
    if (!built) build();
    if (!previous.spec || state.spec !== previous.spec || state.localErrors !== previous.localErrors) renderValues(state);
    if (state.errors !== previous.errors || state.localErrors !== previous.localErrors || state.edited !== previous.edited || !previous.spec) renderErrors(state);
    if (state.result !== previous.result) renderValues(state);
  });
}
