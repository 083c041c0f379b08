// AppMirror.syncSubtree inside a web document, on a recording stand-in for the bus: a document's
// own events normally keep its children current, so its containers are not counted, but an
// element left empty and nameless (a form's label whose field never reached the mirror) is.
import { describe, expect, it } from 'vitest';
import { AppMirror } from './app-mirror.js';
import type { AtspiBus } from './atspi-bus.js';
import { APP_ROOT, type NodeData } from './read-node.js';

const APP = ':1.7';
const node = (path: string, parent: string, role: string, children: string[] = []): NodeData => ({
  path,
  parent,
  children,
  role,
  name: role === 'label' ? '' : path,
  description: '',
  states: ['showing', 'visible'],
  ifaces: new Set(),
});

/** A bus that answers what syncSubtree asks and records each ChildCount read. */
function recordingBus(tree: Map<string, NodeData>, counted: string[]): AtspiBus {
  return {
    call: async (_dest: string, path: string, _iface: string, member: string) => {
      if (member === 'GetChildren') return [(tree.get(path)?.children ?? []).map((c) => [APP, c])];
      return [];
    },
    getProperty: async (ref: { path: string }, _iface: string, name: string) => {
      if (name === 'ChildCount') counted.push(ref.path);
      return tree.get(ref.path)?.children.length ?? 0;
    },
  } as unknown as AtspiBus;
}

describe('AppMirror.syncSubtree in a web document', () => {
  it('counts an empty, nameless label, not the elements the document keeps current', async () => {
    const tree = new Map<string, NodeData>([
      [APP_ROOT, node(APP_ROOT, '', 'application', ['/frame'])],
      ['/frame', node('/frame', APP_ROOT, 'frame', ['/doc'])],
      ['/doc', node('/doc', '/frame', 'document_web', ['/form', '/p'])],
      ['/form', node('/form', '/doc', 'form', ['/label'])],
      ['/label', node('/label', '/form', 'label')],
      ['/p', node('/p', '/doc', 'paragraph', ['/text'])],
      ['/text', node('/text', '/p', 'static')],
    ]);
    const counted: string[] = [];
    const mirror = new AppMirror(recordingBus(tree, counted), APP);
    for (const [p, n] of tree) mirror.nodes.set(p, { ...n, children: [...n.children] });
    await mirror.syncSubtree('/frame', { showingOnly: true });
    expect(counted).toContain('/label');
    expect(counted).not.toContain('/form');
    expect(counted).not.toContain('/p');
  });
});

describe('AppMirror.sync after a subtree read that lost objects', () => {
  it('reads again the objects a parent lists that its first read could not', async () => {
    const tree = new Map<string, NodeData>([
      [APP_ROOT, node(APP_ROOT, '', 'application', ['/frame'])],
      ['/frame', node('/frame', APP_ROOT, 'frame', ['/doc'])],
      ['/doc', node('/doc', '/frame', 'document_web', ['/form'])],
      ['/form', node('/form', '/doc', 'form', ['/label'])],
      ['/label', node('/label', '/form', 'label', ['/field'])],
      ['/field', node('/field', '/label', 'entry')],
    ]);
    // The label's first read fails (an app too busy to answer within the call timeout).
    let labelFailures = 1;
    const bus = {
      call: async (_dest: string, path: string, _iface: string, member: string) => {
        const n = tree.get(path);
        if (path === '/label' && member === 'GetRole' && labelFailures-- > 0)
          throw new Error('AT-SPI call GetRole timed out after 5000 ms');
        if (!n) throw new Error(`unknown ${path}`);
        if (member === 'GetRole') return [n.role === 'entry' ? 79 : 29];
        if (member === 'GetAll')
          return [
            {
              Name: { value: n.name },
              Description: { value: '' },
              Parent: { value: [APP, n.parent] },
              ChildCount: { value: n.children.length },
            },
          ];
        if (member === 'GetState') return [[0, 0]];
        if (member === 'GetInterfaces') return [[]];
        if (member === 'GetChildren') return [n.children.map((c) => [APP, c])];
        return [];
      },
      getProperty: async (ref: { path: string }) => tree.get(ref.path)?.children.length ?? 0,
    } as unknown as AtspiBus;
    const mirror = new AppMirror(bus, APP);
    for (const p of [APP_ROOT, '/frame'])
      mirror.nodes.set(p, { ...tree.get(p)!, children: [...tree.get(p)!.children] });
    mirror.nodes.set('/doc', { ...tree.get('/doc')!, children: [] });
    // The document's count disagrees: its subtree is read, and the label's read fails.
    await mirror.syncSubtree('/frame');
    expect(mirror.nodes.get('/form')?.children).toEqual(['/label']);
    expect(mirror.nodes.has('/label')).toBe(false);
    // Every count now agrees with the mirror's lists; the next observe still finds the field.
    await mirror.syncSubtree('/frame');
    expect(mirror.nodes.has('/label')).toBe(true);
    expect(mirror.nodes.has('/field')).toBe(true);
  });
});
