/**
 * The device commands of one gateway node: a session per unit connected here, fed from the
 * shared log. A command queued on any node reaches every node's follower; only the node
 * holding the unit's connection has a session for it, so that node sends it. Two nodes that
 * both believe they hold a unit (a redial moving between them) race on `markSent`'s expected
 * revision: one append wins, one node writes.
 */
import type { DeviceCommandEvent } from '../../core/events/commands.js';
import type { LogFollower } from '../log-follower.js';
import { CommandSession, type CommandLink, type CommandSessionDeps } from './session.js';

export class GatewayCommands {
  private readonly sessions = new Map<string, { link: CommandLink; session: CommandSession }>();

  constructor(private readonly deps: CommandSessionDeps) {}

  /** Registers the log handlers; before the follower starts. */
  follow(follower: LogFollower): void {
    follower.on('DeviceCommandQueued', (e) => this.sessions.get(e.data.device_id)?.session.offer(e.data.command));
    const forget = (e: { data: DeviceCommandEvent['data'] }) => this.sessions.get(e.data.device_id)?.session.forget(e.data.command_id);
    follower.on('DeviceCommandCancelled', forget);
    follower.on('DeviceCommandExpired', forget);
  }

  /** A unit bound to a connection of this node: the newest connection of a device is the one that sends. */
  attach(link: CommandLink): void {
    this.sessions.get(link.claim.device_id)?.session.close();
    const session = new CommandSession(link, this.deps);
    this.sessions.set(link.claim.device_id, { link, session });
    session.start();
  }

  /** The connection closed (or was replaced); a newer connection's session stays. */
  detach(link: CommandLink): void {
    const entry = this.sessions.get(link.claim.device_id);
    if (entry?.link !== link) return;
    entry.session.close();
    this.sessions.delete(link.claim.device_id);
  }

  /** The session of a connection, while it is the device's newest here. */
  sessionOf(link: CommandLink): CommandSession | null {
    const entry = this.sessions.get(link.claim.device_id);
    return entry?.link === link ? entry.session : null;
  }
}
