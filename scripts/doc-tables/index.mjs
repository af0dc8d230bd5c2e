// Every generated table of the docs, by document: `npm run doc-tables -- --list` names them.
import clocks from './clocks.mjs';
import compute from './compute.mjs';
import containers from './containers.mjs';
import expresspass from './expresspass.mjs';
import f10 from './f10.mjs';
import fastpass from './fastpass.mjs';
import harmony from './harmony.mjs';
import profile from './profile.mjs';
import readme from './readme.mjs';

export const TABLES = [
  ...readme,
  ...clocks,
  ...compute,
  ...containers,
  ...expresspass,
  ...f10,
  ...fastpass,
  ...harmony,
  ...profile,
];
