import { lstatSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { CliError } from '../errors.js';

/**
 * `wf init` writes into a folder someone else may have prepared: a `.env` linked to `~/.bashrc`,
 * or a `src/` linked elsewhere, would make it write outside that folder. Before writing, every
 * component of the path below the target is checked: a symbolic link must resolve inside the
 * target (a link between two files of the app is fine), and a file with other hard links is never
 * written through, since its other names may be anywhere.
 */

const isInside = (root: string, path: string): boolean => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
};

const lstatOrUndefined = (path: string): Stats | undefined => {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
};

/** Where a link leads: its real path, or (dangling) where a write through it would create a file. */
function linkDestination(link: string): string {
  try {
    return realpathSync(link);
  } catch {
    return resolve(dirname(link), readlinkSync(link));
  }
}

/**
 * Throws `CliError` (`UNSAFE_PATH`) when writing `file` (relative to `root`) would go through a link
 * that leaves `root`. `root` itself may be a link: the user named it.
 * @example assertWritesInside('/home/me/app', '.env')
 */
export function assertWritesInside(root: string, file: string): void {
  const realRoot = lstatOrUndefined(root) ? realpathSync(root) : root;
  let path = root;
  const parts = file.split(/[\\/]+/).filter(Boolean);
  for (const [index, part] of parts.entries()) {
    path = join(path, part);
    const stats = lstatOrUndefined(path);
    if (!stats) return; // the rest does not exist yet: wf init creates real folders and files there
    if (stats.isSymbolicLink()) {
      const destination = linkDestination(path);
      if (!isInside(realRoot, destination)) {
        throw new CliError(
          1,
          'UNSAFE_PATH',
          `Refusing to write ${file}: ${path} is a symbolic link to ${destination}, outside ${root}. Remove the link or choose another folder.`,
        );
      }
    } else if (index === parts.length - 1 && stats.isFile() && stats.nlink > 1) {
      throw new CliError(
        1,
        'UNSAFE_PATH',
        `Refusing to write ${file}: ${path} has ${stats.nlink} hard links, so writing it would change a file elsewhere too. Replace it with a copy or choose another folder.`,
      );
    }
  }
}

/** `dir` as one shell word, for the `cd` line wf init prints (spaces, quotes, `$`). */
export function shellQuote(dir: string): string {
  return /^[\w./@%+=:,-]+$/.test(dir) ? dir : `'${dir.replaceAll("'", `'\\''`)}'`;
}
