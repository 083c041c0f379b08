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
