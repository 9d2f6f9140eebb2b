import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { EngramError } from '../../core/index.js';
import { serverPaths } from '../../server/address.js';
import { ask } from '../../server/ask.js';
import { startServer } from '../../server/client.js';
import { PROTOCOL_VERSION, type ServerReply } from '../../server/protocol.js';
import type { Action } from '../action.js';

/** How long `engram ui` waits for a background server it started. */
const START_WAIT_MS = 15_000;

/** A desktop to open a browser on: macOS, Windows, or an X11/Wayland session. */
function opener(env: NodeJS.ProcessEnv): string[] | null {
  if (process.platform === 'darwin') return ['open'];
  if (process.platform === 'win32') return ['cmd', '/c', 'start', '""'];
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return ['xdg-open'];
  return null;
}

/**
 * `engram ui [--port N] [--no-open]`: asks the warm server (started if needed) for a new per-launch secret and the
 * loopback URL of the viewer, prints it (JSON) and opens it in a browser when a desktop is present.
 */
export function registerUiCommands(program: Command, action: Action): void {
  program
    .command('ui')
    .description('open the viewer: engrams, search with each signal, the review queue, health (a page on 127.0.0.1 with a per-launch secret)')
    .option('--port <port>', 'serve the viewer on this loopback port (default: the HTTP API\'s, else any free port)')
    .option('--no-open', 'print the URL without opening a browser')
    .action(
      action(async (context, flags: { port?: string; open: boolean }) => {
        if (flags.port !== undefined && (!/^\d{1,5}$/.test(flags.port) || Number(flags.port) > 65_535)) {
          throw new EngramError('USAGE', `--port must be a number from 0 to 65535, got ${JSON.stringify(flags.port)}`);
        }
        const settings = context.settings();
        if (!settings.config.server.enabled) {
          throw new EngramError('USAGE', 'the viewer is served by the background server, which is off (server.enabled in config.json or ENGRAM_SERVER=off)');
        }
        const script = join(context.runtimeDir, 'dist', 'server.mjs');
        if (!existsSync(join(context.runtimeDir, 'dist', 'ui', 'index.html')) || !existsSync(script)) {
          throw new EngramError('NATIVE_MODULE_MISSING', `the viewer is not built in ${context.runtimeDir}/dist: run ./install.sh (or npm run build)`);
        }
        const paths = serverPaths(settings.paths.home);
        const request = { v: PROTOCOL_VERSION, op: 'ui', ...(flags.port !== undefined ? { port: Number(flags.port) } : {}) };
        let reply = await ask<ServerReply>(paths.socket, request, 5_000);
        if (reply === null) {
          startServer({ paths, runtimeDir: context.runtimeDir, home: settings.paths.home, logs: settings.paths.logs });
          const until = Date.now() + START_WAIT_MS;
          while (reply === null && Date.now() < until) {
            await new Promise((resolve) => setTimeout(resolve, 100));
            reply = await ask<ServerReply>(paths.socket, request, 5_000);
          }
        }
        if (reply === null) throw new EngramError('STORE_UNAVAILABLE', `the background server did not answer within ${START_WAIT_MS / 1000} s (see ${settings.paths.logs}/server.log)`);
        if (!reply.ok) throw new EngramError('BUSY', `the viewer cannot start: ${reply.error}`);
        if (reply.op !== 'ui') throw new EngramError('INTERNAL', `unexpected answer from the server: ${reply.op}`);
        const command = flags.open ? opener(context.io.env) : null;
        if (command) {
          const [file, ...args] = command as [string, ...string[]];
          const child = spawn(file, [...args, reply.url], { detached: true, stdio: 'ignore' });
          child.on('error', () => {});
          child.unref();
        }
        const result = { url: reply.url, origin: reply.origin, port: reply.port, opened: command !== null };
        return {
          result,
          pretty: () => `Engram viewer: ${reply.url}\n(the link carries this launch's secret; ${command ? 'opened in your browser' : 'open it in a browser on this machine'})`,
        };
      }),
    );
}
