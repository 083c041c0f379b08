import dbus from 'dbus-next';
import { IFACE } from './atspi-constants.js';

type Message = InstanceType<typeof dbus.Message>;
type Bus = ReturnType<typeof dbus.sessionBus>;

/** AtspiRef is an AT-SPI object reference: the app's unique bus name and the object path. */
export interface AtspiRef {
  bus: string;
  path: string;
}

export type SignalHandler = (msg: Message) => void;

const DBUS = {
  destination: 'org.freedesktop.DBus',
  path: '/org/freedesktop/DBus',
  iface: 'org.freedesktop.DBus',
};
const REGISTRY = { destination: 'org.a11y.atspi.Registry', path: '/org/a11y/atspi/registry' };

/** A hung app must not hang the request that asked it something. */
const CALL_TIMEOUT_MS = 5_000;
const CONNECT_TIMEOUT_MS = 5_000;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`AT-SPI call ${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/**
 * EVENTS are the AT-SPI events the mirror needs. Registering them is also what wakes GTK3's
 * atk-bridge: until some client registers for events, its Cache interface does not exist.
 */
const EVENTS = [
  'object:children-changed',
  'object:property-change',
  'object:state-changed',
  'object:text-changed',
  'object:bounds-changed',
  'object:visible-data-changed',
  'window:',
  'document:',
];

/**
 * AtspiBus is one connection to the accessibility bus. It speaks raw D-Bus messages rather than
 * dbus-next proxy objects: proxies introspect every object first, which doubles the round trips
 * that the click budget (≤ 15 ms) cannot afford.
 */
export class AtspiBus {
  private readonly handlers = new Set<SignalHandler>();
  private closed = false;

  private constructor(
    private readonly session: Bus,
    readonly bus: Bus,
  ) {
    bus.on('message', (msg: Message) => {
      if (msg.type !== dbus.MessageType.SIGNAL) return;
      for (const h of this.handlers) h(msg);
    });
    // A dropped bus must not crash the daemon; calls then fail and observe reports degraded.
    bus.on('error', () => undefined);
    session.on('error', () => undefined);
  }

  /** connect asks the session bus for the a11y bus address and registers for the mirror's events. */
  static async connect(sessionBusAddress: string): Promise<AtspiBus> {
    const session = dbus.sessionBus({ busAddress: sessionBusAddress });
    session.on('error', () => undefined); // never an unhandled 'error' event, even after a failure
    // dbus-next reports a failed connect only as an 'error' event; its calls would wait forever.
    const failed = new Promise<never>((_, reject) => session.once('error', reject));
    let bus: Bus | null = null;
    try {
      const reply = await withTimeout(
        Promise.race([
          session.call(
            new dbus.Message({
              destination: 'org.a11y.Bus',
              path: '/org/a11y/bus',
              interface: 'org.a11y.Bus',
              member: 'GetAddress',
            }),
          ),
          failed,
        ]),
        CONNECT_TIMEOUT_MS,
        'org.a11y.Bus.GetAddress',
      );
      const address = reply?.body[0] as string;
      bus = dbus.sessionBus({ busAddress: address });
      bus.on('error', () => undefined);
      const busFailed = new Promise<never>((_, reject) => bus?.once('error', reject));
      const conn = new AtspiBus(session, bus);
      await Promise.race([
        conn.call(DBUS.destination, DBUS.path, DBUS.iface, 'AddMatch', 's', ["type='signal'"]),
        busFailed,
      ]);
      await conn.call(DBUS.destination, DBUS.path, DBUS.iface, 'AddMatch', 's', ["type='signal'"]);
      for (const ev of EVENTS) {
        await conn.call(REGISTRY.destination, REGISTRY.path, IFACE.registry, 'RegisterEvent', 's', [
          ev,
        ]);
      }
      return conn;
    } catch (err) {
      bus?.disconnect();
      session.disconnect();
      throw err;
    }
  }

  /** call sends one method call and returns the reply body. Errors reject with the D-Bus error. */
  async call(
    destination: string,
    path: string,
    iface: string,
    member: string,
    signature?: string,
    body?: unknown[],
  ): Promise<unknown[]> {
    const msg = new dbus.Message({
      destination,
      path,
      interface: iface,
      member,
      ...(signature ? { signature, body: body ?? [] } : {}),
    });
    const reply = await withTimeout(this.bus.call(msg), CALL_TIMEOUT_MS, member);
    return reply?.body ?? [];
  }

  /** getProperty reads one D-Bus property (AT-SPI exposes Name, NActions, CurrentValue this way). */
  async getProperty(ref: AtspiRef, iface: string, name: string): Promise<unknown> {
    const [variant] = await this.call(
      ref.bus,
      ref.path,
      'org.freedesktop.DBus.Properties',
      'Get',
      'ss',
      [iface, name],
    );
    return (variant as { value: unknown }).value;
  }

  async setProperty(
    ref: AtspiRef,
    iface: string,
    name: string,
    signature: string,
    value: unknown,
  ): Promise<void> {
    await this.call(ref.bus, ref.path, 'org.freedesktop.DBus.Properties', 'Set', 'ssv', [
      iface,
      name,
      new dbus.Variant(signature, value),
    ]);
  }

  /** pidOf asks the bus daemon which process owns an app's connection. */
  async pidOf(busName: string): Promise<number> {
    const [pid] = await this.call(
      DBUS.destination,
      DBUS.path,
      DBUS.iface,
      'GetConnectionUnixProcessID',
      's',
      [busName],
    );
    return Number(pid);
  }

  /** apps lists the bus names of applications registered with the AT-SPI registry. */
  async apps(): Promise<AtspiRef[]> {
    const [children] = await this.call(
      REGISTRY.destination,
      '/org/a11y/atspi/accessible/root',
      IFACE.accessible,
      'GetChildren',
    );
    return (children as [string, string][]).map(([bus, path]) => ({ bus, path }));
  }

  onSignal(handler: SignalHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.handlers.clear();
    this.bus.disconnect();
    this.session.disconnect();
  }
}
