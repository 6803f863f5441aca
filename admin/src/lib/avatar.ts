// Two-letter avatars and a stable colour per agent.

export function initials(name: string): string {
  const words = name.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  const [first, second] = words;
  if (!first) return "?";
  const letters = second ? [...first][0]! + [...second][0]! : [...first].slice(0, 2).join("");
  return letters.toUpperCase();
}

/** Hue 0–359 picked from the agent id, so an agent keeps its colour everywhere. */
export const avatarHue = (agentId: number): number => (agentId * 137) % 360;
