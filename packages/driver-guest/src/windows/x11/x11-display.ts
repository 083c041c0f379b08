import { X11Connection } from './x11-connection.js';
import { internAtom, queryExtension } from './x11-requests.js';

/**
 * X11Display owns the driver's one protocol connection to its display: it connects lazily,
 * reconnects after the server dropped it (a display restart), and caches atoms and the XTEST
 * opcode, which are stable for the life of a server.
 */
export class X11Display {
  private connection: Promise<X11Connection> | null = null;
  private atoms = new Map<string, number>();
  private xtest: number | null = null;

  constructor(
    readonly display: string,
    private readonly xauthority?: string,
  ) {}

  async conn(): Promise<X11Connection> {
    if (this.connection) {
      const current = await this.connection.catch(() => null);
      if (current && !current.isClosed) return current;
      this.atoms.clear();
      this.xtest = null;
    }
    this.connection = X11Connection.connect(this.display, this.xauthority);
    return this.connection;
  }

  async atom(name: string): Promise<number> {
    const known = this.atoms.get(name);
    if (known !== undefined) return known;
    const value = await internAtom(await this.conn(), name);
    this.atoms.set(name, value);
    return value;
  }

  /** xtestOpcode is XTEST's major opcode; Xvfb always has the extension, other servers may not. */
  async xtestOpcode(): Promise<number> {
    if (this.xtest !== null) return this.xtest;
    const opcode = await queryExtension(await this.conn(), 'XTEST');
    if (opcode === null) throw new Error(`display ${this.display} has no XTEST extension`);
    this.xtest = opcode;
    return opcode;
  }

  async close(): Promise<void> {
    const current = await this.connection?.catch(() => null);
    current?.close();
    this.connection = null;
  }
}
