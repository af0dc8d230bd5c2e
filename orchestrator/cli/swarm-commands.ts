/**
 * `dcemu swarm`: a Docker Swarm for `--runtime swarm` (docs/containers.md): `init`, `join`, `leave`,
 * and `lab up|down`, a swarm of several machines on this one (orchestrator/cli/commands.ts adds them).
 */
import type { Command } from 'commander';
import { onInterrupt } from '../engine/interrupts.js';
import { positive, subnets } from './options.js';

/** `dcemu swarm` and its commands. */
export function addSwarmCommands(program: Command): void {
  const swarm = program
    .command('swarm')
    .description(
      'a Docker Swarm for --runtime swarm, its own networks inside 198.18.0.0/15 (docs/containers.md)',
    );
  swarm
    .command('init')
    .description('make this machine a swarm manager; prints the command that joins another machine')
    .option(
      '--advertise-addr <ip>',
      "this machine's address on the network the machines share (default 127.0.0.1: a one-machine swarm)",
    )
    .option(
      '--avoid <subnets>',
      "subnets the swarm's networks must not take, comma-separated (the network the machines share, say)",
      subnets,
    )
    .action(async (opts: { advertiseAddr?: string; avoid?: string[] }) => {
      const { swarmInit, swarmSubnets } = await import('../runtime/swarm-setup.js');
      const { docker } = await import('../runtime/docker-client.js');
      const say = (s: string) => process.stderr.write(`dcemu: ${s}\n`);
      const token = await swarmInit({ advertiseAddr: opts.advertiseAddr, avoid: opts.avoid, say });
      if (token && opts.advertiseAddr) {
        // a joining machine's bridge keeps clear of this one's and of the swarm's own network
        const { gwbridge, pool } = await swarmSubnets(await docker());
        const avoid = [...(opts.avoid ?? []), gwbridge, pool].filter(Boolean).join(',');
        process.stdout.write(`dcemu swarm join ${opts.advertiseAddr} --token ${token} --avoid ${avoid}\n`);
      }
    });
  swarm
    .command('join')
    .description('join this machine to a swarm as a worker')
    .argument('<manager>', "the manager's address (host or host:port)")
    .requiredOption('--token <token>', "the worker token 'dcemu swarm init' printed")
    .option('--advertise-addr <ip>', "this machine's address on the network the machines share")
    .option(
      '--avoid <subnets>',
      "subnets this machine's docker_gwbridge must not take: the swarm's and other machines' ('dcemu swarm init' prints them)",
      subnets,
    )
    .action(async (manager: string, opts: { token: string; advertiseAddr?: string; avoid?: string[] }) => {
      const { swarmJoin } = await import('../runtime/swarm-setup.js');
      await swarmJoin({ manager, ...opts, say: (s) => process.stderr.write(`dcemu: ${s}\n`) });
    });
  swarm
    .command('leave')
    .description("remove dcemu's services, leave the swarm and remove the docker_gwbridge dcemu made")
    .action(async () => {
      const { swarmLeave } = await import('../runtime/swarm-setup.js');
      const { keptMessage } = await import('../runtime/docker-client.js');
      const kept = await swarmLeave((s) => process.stderr.write(`dcemu: ${s}\n`));
      if (kept.length > 0) {
        process.stderr.write(`dcemu: error: ${keptMessage(kept)}\n`);
        process.exitCode = 1;
      }
    });
  addLabCommands(swarm);
}

/** `dcemu swarm lab`: extra Docker daemons in network namespaces, as the swarm's other machines. */
function addLabCommands(swarm: Command): void {
  const lab = swarm
    .command('lab')
    .description(
      'a swarm of several machines on this one: extra Docker daemons in network namespaces (root; docs/containers.md)',
    );
  lab
    .command('up')
    .description(
      'start N lab machines, make this machine their swarm manager, join them and carry the image to them',
    )
    .option('--nodes <n>', 'lab machines besides this one', positive, 1)
    .action(async (opts: { nodes: number }) => {
      const { labUp } = await import('../runtime/swarm-lab.js');
      const say = (s: string) => process.stderr.write(`dcemu: ${s}\n`);
      // Ctrl-C: up stops at its next step and removes what it made
      const abort = new AbortController();
      const off = onInterrupt((signal) => {
        if (!abort.signal.aborted)
          say(`interrupted (${signal}): the lab stops at its next step and is removed`);
        abort.abort();
      });
      const state = await labUp({ nodes: opts.nodes, say, signal: abort.signal }).finally(off);
      for (const m of state.machines) process.stdout.write(`${m.name}=unix://${m.socket}\n`);
    });
  lab
    .command('down')
    .description(
      "remove the lab: its machines leave, their daemons and namespaces go, and the swarm 'up' made",
    )
    .action(async () => {
      const { labDown } = await import('../runtime/swarm-lab.js');
      await labDown((s) => process.stderr.write(`dcemu: ${s}\n`));
    });
}
