import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { EngramError } from '../../core/index.js';
import { serverPaths } from '../../server/address.js';
import { ask } from '../../server/ask.js';
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../../server/client.js';
import { PROTOCOL_VERSION } from '../../server/protocol.js';
import { lockOwner, processAlive } from '../../server/lock.js';
import type { Action } from '../action.js';

/** How long `engram serve` waits for a background server to hand over. */
const HANDOVER_MS = 10_000;

/**
 * `engram serve [port]`: the warm server in the foreground, with the Go engram's HTTP API on 127.0.0.1:7437 (or the
 * port given). A background server of the same home is asked to stop first, so there is still one server (one
 * index in memory) that hooks, MCP and HTTP share. Runs until Ctrl-C; exit 1 when the HTTP API cannot start.
 */
export function registerServeCommands(program: Command, action: Action): void {
  program
    .command('serve')
    .description('run the server in the foreground with the HTTP API on 127.0.0.1:7437 (the Go engram\'s API; port and host can be given)')
    .argument('[port]', 'port for the HTTP API (default: http.port in config.json, $ENGRAM_PORT, else 7437; 0 = any free port)')
    .option('--host <host>', 'address to listen on (default 127.0.0.1); a non-loopback one needs --allow-remote and $ENGRAM_HTTP_TOKEN')
    .option('--allow-remote', 'allow a non-loopback --host; every request must then send Authorization: Bearer $ENGRAM_HTTP_TOKEN')
    .action(
      action(async (context, port: string | undefined, flags: { host?: string; allowRemote?: boolean }) => {
        if (port !== undefined && !/^\d{1,5}$/.test(port)) throw new EngramError('USAGE', `port must be a number from 0 to 65535, got ${JSON.stringify(port)}`);
        const settings = context.settings();
        const script = join(context.installRoot, 'dist', 'server.mjs');
        if (!existsSync(script)) throw new EngramError('NATIVE_MODULE_MISSING', `${script} is missing: run ./install.sh (or npm run build) in ${context.installRoot}`);
        const paths = serverPaths(settings.paths.home);
        const owner = lockOwner(paths.lock);
        if (owner !== null && processAlive(owner)) {
          await ask(paths.socket, { v: PROTOCOL_VERSION, op: 'stop' }, 2_000);
          const until = Date.now() + HANDOVER_MS;
          while (Date.now() < until && lockOwner(paths.lock) !== null && processAlive(owner)) await new Promise((resolve) => setTimeout(resolve, 100));
          if (processAlive(owner) && lockOwner(paths.lock) === owner) {
            throw new EngramError('BUSY', `the background server (pid ${owner}) did not stop within ${HANDOVER_MS / 1000} s; stop it (kill ${owner}) and run engram serve again`);
          }
        }
        const args = [...SERVER_NODE_FLAGS, script, '--foreground', ...(port !== undefined ? ['--http-port', port] : []), ...(flags.host ? ['--http-host', flags.host] : []), ...(flags.allowRemote ? ['--allow-remote'] : [])];
        const child = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...context.io.env, ...SERVER_ENV, ENGRAM_HOME: settings.paths.home } });
        const forward = (signal: NodeJS.Signals): void => {
          child.kill(signal);
        };
        const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
        signals.forEach((signal) => process.on(signal, forward));
        const code = await new Promise<number>((resolve) => child.on('exit', (exit) => resolve(exit ?? 1)));
        signals.forEach((signal) => process.off(signal, forward));
        return { result: undefined, pretty: () => '', exitCode: code };
      }),
    );
}
