import { setTimeout as sleep } from 'node:timers/promises';
import dbus from 'dbus-next';

const call = (bus: dbus.MessageBus, message: ConstructorParameters<typeof dbus.Message>[0]) =>
  bus.call(new dbus.Message(message));

/**
 * startA11yBus brings up the AT-SPI bus of a session: `org.a11y.Bus.GetAddress` makes the session
 * bus activate at-spi-bus-launcher (which starts the accessibility dbus-daemon); setting
 * `org.a11y.Status.IsEnabled` and `ScreenReaderEnabled` tells toolkits that only turn their
 * bridge on for assistive technology (Chromium, Firefox, Qt) to do so; pinging the registry
 * activates at-spi2-registryd now rather than on the first observe. Returns the a11y bus address.
 */
export async function startA11yBus(sessionBusAddress: string, timeoutMs = 10_000): Promise<string> {
  const session = dbus.sessionBus({ busAddress: sessionBusAddress });
  session.on('error', () => undefined);
  let a11y: dbus.MessageBus | undefined;
  try {
    const deadline = Date.now() + timeoutMs;
    let address = '';
    while (!address) {
      try {
        const reply = await call(session, {
          destination: 'org.a11y.Bus',
          path: '/org/a11y/bus',
          interface: 'org.a11y.Bus',
          member: 'GetAddress',
        });
        address = typeof reply?.body[0] === 'string' ? reply.body[0] : '';
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`the AT-SPI bus did not start: ${String(err)}`);
        await sleep(50);
      }
    }
    for (const property of ['IsEnabled', 'ScreenReaderEnabled']) {
      await call(session, {
        destination: 'org.a11y.Bus',
        path: '/org/a11y/bus',
        interface: 'org.freedesktop.DBus.Properties',
        member: 'Set',
        signature: 'ssv',
        body: ['org.a11y.Status', property, new dbus.Variant('b', true)],
      }).catch(() => undefined); // older launchers lack the property; toolkits then use env
    }
    a11y = dbus.sessionBus({ busAddress: address });
    a11y.on('error', () => undefined);
    await call(a11y, {
      destination: 'org.a11y.atspi.Registry',
      path: '/org/a11y/atspi/registry',
      interface: 'org.freedesktop.DBus.Peer',
      member: 'Ping',
    });
    return address;
  } finally {
    session.disconnect();
    a11y?.disconnect();
  }
}
