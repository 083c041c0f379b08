import { execFile } from 'node:child_process';
import dbus from 'dbus-next';

const BUS_PATH = '/org/a11y/bus';
const STATUS = 'org.a11y.Status';
const PROPERTIES = 'org.freedesktop.DBus.Properties';

const INTROSPECTION = `<node>
 <interface name="org.a11y.Bus"><method name="GetAddress"><arg type="s" direction="out"/></method></interface>
 <interface name="${STATUS}">
  <property name="IsEnabled" type="b" access="readwrite"/>
  <property name="ScreenReaderEnabled" type="b" access="readwrite"/>
 </interface>
</node>`;

export interface A11yBus {
  /** The accessibility bus's address: the session bus's. */
  address: string;
  /** close gives up org.a11y.Bus (the session bus's connection); the bus dies with the session. */
  close(): void;
}

/**
 * startA11yBus makes the session bus the desktop's AT-SPI bus, without at-spi-bus-launcher and
 * the second dbus-daemon it starts (8 + 4.6 MB of RSS in every idle desktop, measured). AT-SPI
 * needs no bus of its own: the launcher only exists to give the accessibility traffic one,
 * and a desktop here is a single user's. The session bus activates at-spi2-registryd (its
 * configuration adds at-spi2-core's service directory, start-x-session.ts); this function
 * publishes the bus where toolkits look for it (the AT_SPI_BUS root-window property, which
 * libatspi reads after the AT_SPI_BUS_ADDRESS variable and before asking D-Bus) and serves the
 * launcher's two interfaces from this process: `org.a11y.Bus.GetAddress`, and `org.a11y.Status`
 * with IsEnabled and ScreenReaderEnabled true, which is what makes toolkits that only turn their
 * bridge on for assistive technology (Chromium, Firefox, Qt) do so. Holding the name also keeps
 * the session bus from activating the real launcher (a second bus) for an app that asks, so this
 * process must live as long as the desktop — as every caller of startDesktop does (the sandbox
 * entry, the cubicle-desktop launcher, a test). Pinging the registry activates it now rather
 * than on the first observe.
 */
export async function startA11yBus(options: {
  sessionBusAddress: string;
  display: string;
}): Promise<A11yBus> {
  const address = options.sessionBusAddress;
  const session = dbus.sessionBus({ busAddress: address });
  session.on('error', () => undefined); // a session bus gone at stop() is no error
  try {
    await setRootProperty(options.display, 'AT_SPI_BUS', address);
    serveBusInterfaces(session, address);
    // Fail rather than queue behind another owner: its bus would not be the one we publish.
    const owned = await session.requestName('org.a11y.Bus', dbus.NameFlag.DO_NOT_QUEUE);
    if (owned !== dbus.RequestNameReply.PRIMARY_OWNER)
      throw new Error('org.a11y.Bus is already owned on the session bus');
    await session.call(
      new dbus.Message({
        destination: 'org.a11y.atspi.Registry',
        path: '/org/a11y/atspi/registry',
        interface: 'org.freedesktop.DBus.Peer',
        member: 'Ping',
      }),
    );
    return { address, close: () => session.disconnect() };
  } catch (err) {
    session.disconnect();
    throw new Error(`the AT-SPI bus did not start: ${String(err)}`);
  }
}

function setRootProperty(display: string, name: string, value: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const args = ['-display', display, '-root', '-f', name, '8s', '-set', name, value];
    execFile('xprop', args, { timeout: 5000 }, (err) => (err ? reject(err) : resolve()));
  });
}

/** serveBusInterfaces answers the launcher's methods and properties on /org/a11y/bus. */
function serveBusInterfaces(session: dbus.MessageBus, address: string): void {
  const status: Record<string, boolean> = { IsEnabled: true, ScreenReaderEnabled: true };
  const reply = (msg: dbus.Message, signature?: string, body?: unknown[]) =>
    session.send(dbus.Message.newMethodReturn(msg, signature, body));
  const unknown = (msg: dbus.Message, what: string) =>
    session.send(
      // dbus-next's typings say string; the library takes the call it answers.
      dbus.Message.newError(
        msg as unknown as string,
        'org.freedesktop.DBus.Error.UnknownProperty',
        `no ${what}`,
      ),
    );
  session.addMethodHandler((msg: dbus.Message): boolean => {
    if (msg.path !== BUS_PATH) return false;
    const [iface, name, value] = msg.body as [string, string, dbus.Variant | undefined];
    switch (`${msg.interface}.${msg.member}`) {
      case 'org.a11y.Bus.GetAddress':
        reply(msg, 's', [address]);
        return true;
      case 'org.freedesktop.DBus.Introspectable.Introspect':
        reply(msg, 's', [INTROSPECTION]);
        return true;
      case `${PROPERTIES}.GetAll`:
        reply(msg, 'a{sv}', [
          iface === STATUS
            ? Object.fromEntries(
                Object.entries(status).map(([k, v]) => [k, new dbus.Variant('b', v)]),
              )
            : {},
        ]);
        return true;
      case `${PROPERTIES}.Get`:
        if (iface !== STATUS || !(name in status)) unknown(msg, `${iface}.${name}`);
        else reply(msg, 'v', [new dbus.Variant('b', status[name])]);
        return true;
      case `${PROPERTIES}.Set`:
        if (iface !== STATUS || !(name in status) || typeof value?.value !== 'boolean') {
          unknown(msg, `${iface}.${name}`);
          return true;
        }
        status[name] = value.value;
        reply(msg);
        // Toolkits watch this to turn their bridge on or off, as the launcher signals it.
        session.send(
          dbus.Message.newSignal(BUS_PATH, PROPERTIES, 'PropertiesChanged', 'sa{sv}as', [
            STATUS,
            { [name]: new dbus.Variant('b', value.value) },
            [],
          ]),
        );
        return true;
      default:
        return false;
    }
  });
}
