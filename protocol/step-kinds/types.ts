import type { Fields } from '../validate.js';

/** The fields every suspended step has on the wire: its position, name and parallel group. */
export interface SuspensionBase {
  index: number;
  name: string;
  group: number;
}

/**
 * How one kind of suspending step travels in a `suspend` line: the parser of its own fields (the
 * base fields are parsed already). Throws ProtocolError naming the field.
 */
export type ParseSuspension<Fields_> = (o: Fields, where: string) => Fields_;
