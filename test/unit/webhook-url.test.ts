/** Which webhook targets are allowed (src/providers/webhook-url.ts), rule by rule. `make mutation` runs it. */
import { describe, expect, it } from "vitest";
import { parseProviderInput } from "../../src/providers/provider.ts";
import {
  DEFAULT_WEBHOOK_PORTS,
  firstRefusedIpv6,
  isPublicAddress,
  NOT_PUBLIC,
  webhookUrlProblem,
} from "../../src/providers/webhook-url.ts";

const PROD = { production: true };
const DEV = { production: false };

describe("isPublicAddress", () => {
  it.each([
    "8.8.8.8",
    "1.1.1.1",
    "93.184.216.34",
    "2606:4700::1111",
    "2a00:1450:4001:80b::200e",
    "2001:4860:4860::8888",
  ])("%s is public", (a) => {
    expect(isPublicAddress(a)).toBe(true);
  });

  it.each([
    "127.0.0.1",
    "10.0.0.1",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "240.0.0.1",
    "::",
    "::1",
    "::7f00:1",
    "::a9fe:a9fe",
    "::ffff:127.0.0.1",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "100::1",
    "fc00::1",
    "fd00:ec2::254",
    "fe80::1",
    "ff02::1",
    "2001:db8::1",
    "2002:808:808::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "4000::1",
    "8000::1",
    "not-an-address",
    "",
  ])("%s is not", (a) => {
    expect(isPublicAddress(a)).toBe(false);
  });
});

describe("firstRefusedIpv6", () => {
  it("names the first IPv6 answer outside the public internet, and leaves IPv4 answers to the filter", () => {
    expect(firstRefusedIpv6([])).toBeUndefined();
    expect(firstRefusedIpv6([{ address: "2606:4700::1111", family: 6 }])).toBeUndefined();
    expect(firstRefusedIpv6([{ address: "127.0.0.1", family: 4 }])).toBeUndefined();
    expect(
      firstRefusedIpv6([
        { address: "93.184.216.34", family: 4 },
        { address: "2606:4700::1111", family: 6 },
        { address: "::7f00:1", family: 6 },
        { address: "::1", family: 6 },
      ]),
    ).toBe("::7f00:1");
  });
});

describe("webhookUrlProblem", () => {
  it("always wants an http(s) URL without credentials", () => {
    for (const policy of [PROD, DEV]) {
      expect(webhookUrlProblem("not a url", policy)).toBe("webhook_url must be an http or https URL");
      expect(webhookUrlProblem("ftp://hooks.example.com/", policy)).toBe("webhook_url must be an http or https URL");
      expect(webhookUrlProblem("https://user@hooks.example.com/", policy)).toBe(
        "webhook_url must not carry a user name or password",
      );
      expect(webhookUrlProblem("https://:pw@hooks.example.com/", policy)).toBe(
        "webhook_url must not carry a user name or password",
      );
    }
  });

  it("in development allows http, any port and private addresses", () => {
    for (const url of ["http://127.0.0.1:8080/hook", "http://localhost/hook", "https://10.0.0.1:9999/x"]) {
      expect(webhookUrlProblem(url, DEV), url).toBeUndefined();
    }
  });

  it("under production's rules wants https on an allowed port to a public host", () => {
    expect(webhookUrlProblem("https://hooks.example.com/leads", PROD)).toBeUndefined();
    expect(webhookUrlProblem("https://hooks.example.com:443/leads", PROD)).toBeUndefined();
    expect(webhookUrlProblem("https://8.8.8.8/leads", PROD)).toBeUndefined();
    expect(webhookUrlProblem("https://[2606:4700::1111]/leads", PROD)).toBeUndefined();
    expect(webhookUrlProblem("http://hooks.example.com/leads", PROD)).toBe("webhook_url must use https");
    expect(webhookUrlProblem("https://hooks.example.com:8443/leads", PROD)).toBe("webhook_url must use port 443 or 80");
    expect(webhookUrlProblem("https://hooks.example.com:80/leads", PROD)).toBeUndefined();
    expect(DEFAULT_WEBHOOK_PORTS).toEqual([443, 80]);
    const wide = { production: true, allowedPorts: [443, 8443] };
    expect(webhookUrlProblem("https://hooks.example.com:8443/leads", wide)).toBeUndefined();
    expect(webhookUrlProblem("https://hooks.example.com:80/leads", wide)).toBe("webhook_url must use port 443 or 8443");
    expect(webhookUrlProblem("https://hooks.example.com/leads", { production: true, allowedPorts: [8443] })).toBe(
      "webhook_url must use port 8443",
    );
  });

  it.each([
    "https://localhost/x",
    "https://api.localhost/x",
    "https://127.0.0.1/x",
    "https://0x7f000001/x",
    "https://2130706433/x",
    "https://169.254.169.254/latest/meta-data/",
    "https://10.1.2.3/x",
    "https://[::1]/x",
    "https://[::127.0.0.1]/x",
    "https://[::169.254.169.254]/x",
    "https://[::ffff:127.0.0.1]/x",
    "https://[64:ff9b::a9fe:a9fe]/x",
    "https://[2002:7f00:1::1]/x",
    "https://[fd00::1]/x",
  ])("refuses %s under production's rules with the one message", (url) => {
    expect(webhookUrlProblem(url, PROD)).toBe(NOT_PUBLIC);
  });

  it.each([
    "https://localhost./x",
    "https://LOCALHOST./x",
    "https://LocalHost/x",
    "https://localhost../x",
    "https://localhost.:443/x",
    "https://foo.localhost./x",
    "https://Foo.LOCALHOST./x",
    "https://a.b.localhost../x",
    "https://127.0.0.1./x",
    "https://0x7f000001./x",
  ])("refuses %s (a trailing dot or another case names the same host) when it is saved", (url) => {
    expect(webhookUrlProblem(url, PROD)).toBe(NOT_PUBLIC);
    // The provider's field is named, with the code a bad URL gets.
    expect(parseProviderInput({ name: "Acme", webhook_url: url }, false, PROD).violations).toEqual([
      { field: "webhook_url", code: "invalid_url", message: NOT_PUBLIC },
    ]);
  });

  it("keeps names that only contain localhost, and allows a trailing dot in development", () => {
    for (const url of ["https://localhost.example.com/x", "https://mylocalhost./x", "https://localhostx/x"]) {
      expect(webhookUrlProblem(url, PROD), url).toBeUndefined();
    }
    expect(webhookUrlProblem("http://localhost./x", DEV)).toBeUndefined();
  });
});
