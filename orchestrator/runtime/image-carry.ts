/**
 * The image on every machine of a swarm without a registry: dcemu carries its image from this
 * machine's daemon to another's as `docker save | docker load` would (the daemons' own APIs, streamed),
 * when that daemon lacks it. "Lacks" is by hash: the image id is the digest of its configuration, which
 * `load` keeps, so a daemon holding the same id holds the same bytes; a tag on another image is
 * replaced.
 */
import { RuntimeError } from '../engine/errors.js';
import type { Docker } from './docker-client.js';

/** The id of `image` on a daemon, or null when it has none by that name. */
async function imageId(d: Docker, image: string): Promise<string | null> {
  const found = (await d
    .getImage(image)
    .inspect()
    .catch((err: { statusCode?: number }) => {
      if (err.statusCode === 404) return null;
      throw err;
    })) as { Id: string } | null;
  return found?.Id ?? null;
}

export interface Carried {
  /** false: the daemon had the image already */
  carried: boolean;
  bytes: number;
  ms: number;
}

/**
 * Makes `image` on daemon `to` the one on `from` (by id), loading it there when it is missing or
 * differs. `machine` names the far daemon in errors, with the step that failed.
 */
export async function carryImage(from: Docker, to: Docker, image: string, machine: string): Promise<Carried> {
  const step = async <T>(what: string, f: () => Promise<T>): Promise<T> => {
    try {
      return await f();
    } catch (err) {
      if (err instanceof RuntimeError) throw err;
      throw new RuntimeError(
        `swarm machine ${machine}: cannot ${what} (${(err as Error).message.split('\n')[0].trim()})`,
      );
    }
  };
  const want = await imageId(from, image);
  if (!want) throw new RuntimeError(`image ${image} is not on this machine's Docker daemon`);
  const has = await step(`ask its Docker daemon for image ${image}`, () => imageId(to, image));
  if (has === want) return { carried: false, bytes: 0, ms: 0 };
  const t0 = Date.now();
  let bytes = 0;
  await step(`load image ${image} into its Docker daemon`, async () => {
    const tar = (await from.getImage(image).get()) as NodeJS.ReadableStream;
    tar.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    const out = (await to.loadImage(tar as unknown as string)) as NodeJS.ReadableStream;
    // the daemon answers as it loads, one JSON line per step; an error is one of them
    const lines = await new Promise<string>((resolve, reject) => {
      let text = '';
      out.on('data', (c: Buffer) => {
        text += c.toString();
      });
      out.on('end', () => resolve(text));
      out.on('error', reject);
      tar.on('error', reject);
    });
    const failed = /"error"\s*:\s*"([^"]*)"/.exec(lines);
    if (failed) throw new Error(failed[1]);
  });
  const now = await step(`ask its Docker daemon for image ${image}`, () => imageId(to, image));
  if (now !== want)
    throw new RuntimeError(
      `swarm machine ${machine}: image ${image} was loaded into its Docker daemon but its id is ${now ?? 'missing'}, not ${want}`,
    );
  return { carried: true, bytes, ms: Date.now() - t0 };
}
