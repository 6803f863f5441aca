import { avatarHue, initials } from "../lib/avatar";

interface Props {
  agentId: number;
  name: string;
  size?: "sm" | "md" | "lg";
  muted?: boolean;
}

export function Avatar({ agentId, name, size = "md", muted = false }: Props) {
  return (
    <span
      class={`avatar avatar-${size}${muted ? " avatar-muted" : ""}`}
      style={{ "--hue": String(avatarHue(agentId)) }}
      aria-hidden="true"
    >
      {initials(name)}
    </span>
  );
}
