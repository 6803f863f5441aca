import { afterEach, describe, expect, it, vi } from "vitest";
import { adoptAddressToken, authHeader, splitAddressToken, storedToken } from "./token";

describe("the token in the page's address", () => {
  it("is split from the address, which keeps its other parameters and its route", () => {
    expect(splitAddressToken("http://127.0.0.1:8000/?token=abc-DEF_123#/fleets/2/agents")).toEqual({
      token: "abc-DEF_123",
      address: "/#/fleets/2/agents",
    });
    expect(splitAddressToken("http://127.0.0.1:8000/?a=1&token=t&b=2")).toEqual({ token: "t", address: "/?a=1&b=2" });
    expect(splitAddressToken("http://127.0.0.1:8000/?token=")).toEqual({ token: null, address: "/" });
    expect(splitAddressToken("http://127.0.0.1:8000/#/fleets")).toBeNull();
  });
});

function browser(href: string) {
  const storage = new Map<string, string>();
  const replaced: string[] = [];
  vi.stubGlobal("sessionStorage", {
    getItem: (key: string) => storage.get(key) ?? null,
    setItem: (key: string, value: string) => storage.set(key, value),
  });
  vi.stubGlobal("window", {
    location: { href },
    history: { state: null, replaceState: (_state: unknown, _title: string, url: string) => replaced.push(url) },
  });
  return { replaced };
}

describe("adopting the address's token", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("keeps it for the session, sends it as a bearer token and clears it from the address bar", () => {
    const page = browser("http://127.0.0.1:8000/?token=s3cret-token#/fleets");

    adoptAddressToken();

    expect(storedToken()).toBe("s3cret-token");
    expect(authHeader()).toEqual({ Authorization: "Bearer s3cret-token" });
    expect(page.replaced).toEqual(["/#/fleets"]);
  });

  it("leaves an address without a token, and the kept token, alone", () => {
    const page = browser("http://127.0.0.1:8000/#/fleets");
    sessionStorage.setItem("cafleet-admin-token", "kept");

    adoptAddressToken();

    expect(storedToken()).toBe("kept");
    expect(page.replaced).toEqual([]);
  });
});
