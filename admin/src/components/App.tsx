import { useEffect, useState } from "preact/hooks";
import { parseRoute, routeHash } from "../lib/route";
import { Dashboard } from "./Dashboard";
import { FleetPicker } from "./FleetPicker";
import { TokenGate } from "./TokenDialog";

export function App() {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));

  useEffect(() => {
    const onHash = (): void => setRoute(parseRoute(window.location.hash));
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);

  useEffect(() => {
    const canonical = routeHash(route);
    if (window.location.hash !== canonical) window.history.replaceState(null, "", canonical);
  }, [route]);

  return (
    <>
      {route.view === "fleets" ? (
        <FleetPicker />
      ) : (
        <Dashboard key={route.fleetId} fleetId={route.fleetId} agentId={route.agentId} mode={route.mode} />
      )}
      <TokenGate />
    </>
  );
}
