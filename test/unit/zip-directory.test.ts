/**
 * The ZIP directory on its own (src/zip/zip-directory.ts): what a lookup answers for a state's
 * ZIP, a ZIP+4, Puerto Rico (from the second source), the military APO/FPO/DPO regions, and what
 * it refuses. The directory is packed into typed arrays; these are the answers the leads' checks
 * rely on (origin and destination city and state).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { loadZipDirectory, type ZipDirectory } from "../../src/zip/zip-directory.ts";

let zips: ZipDirectory;
beforeAll(() => {
  zips = loadZipDirectory();
});

describe("the ZIP directory", () => {
  it("names a state's ZIP with its city, state code and state id", () => {
    expect(zips.lookup("10001")).toEqual({ zip: "10001", city: "New York", stateCode: "NY", stateId: 33 });
    expect(zips.lookup("90210")).toEqual({ zip: "90210", city: "Beverly Hills", stateCode: "CA", stateId: 5 });
  });

  it("reads a ZIP+4 as its five digits", () => {
    expect(zips.lookup("33101-1234")).toEqual({ zip: "33101", city: "Miami", stateCode: "FL", stateId: 10 });
  });

  it("knows Puerto Rico's ZIPs, which GeoNames files apart", () => {
    expect(zips.lookup("00901")).toEqual({ zip: "00901", city: "San Juan", stateCode: "PR", stateId: 52 });
    expect(zips.lookup("00601")?.city).toBe("Adjuntas");
  });

  it("files the military ZIPs under their region, the city being APO, FPO or DPO", () => {
    expect(zips.lookup("09007")).toEqual({ zip: "09007", city: "APO", stateCode: "AE", stateId: 54 });
  });

  it("takes GeoNames' later line for a ZIP it lists twice (96860: Honolulu's JBPHH, then FPO AA)", () => {
    expect(zips.lookup("96860")).toEqual({ zip: "96860", city: "FPO", stateCode: "AA", stateId: 53 });
  });

  it("refuses an unknown or malformed ZIP", () => {
    for (const zip of ["00000", "99999", "1234", "123456", "12345-", "abcde", ""])
      expect(zips.lookup(zip)).toBeUndefined();
  });

  it("knows the 41,661 ZIPs of its sources, under 18,663 distinct city names", () => {
    let known = 0;
    const cities = new Set<string>();
    for (let n = 0; n < 100_000; n++) {
      const place = zips.lookup(String(n).padStart(5, "0"));
      if (!place) continue;
      known++;
      cities.add(place.city);
    }
    expect(known).toBe(41_661);
    expect(cities.size).toBe(18_663);
  });
});
