// Inline SVG icons (decorative: every one is aria-hidden; buttons carry their own labels).
import type { ComponentChildren } from "preact";

function Icon({ size = 16, children }: { size?: number; children: ComponentChildren }) {
  return (
    <svg
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      stroke-width="2"
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden="true"
      focusable="false"
    >
      {children}
    </svg>
  );
}

export const Logo = ({ size = 22 }: { size?: number }) => (
  <svg width={size} height={size} viewBox="0 0 32 32" aria-hidden="true" focusable="false">
    <rect x="1" y="1" width="30" height="30" rx="8" fill="var(--accent)" />
    <path
      d="M7 20.5l3-9h12l3 9zM13 11.5V7.5h6v4M5 23.5c2 1.5 4 1.5 5.5 0 1.5 1.5 4 1.5 5.5 0 1.5 1.5 4 1.5 5.5 0 1.5 1.5 3.5 1.5 5.5 0"
      fill="none"
      stroke="var(--accent-fg)"
      stroke-width="1.8"
      stroke-linecap="round"
      stroke-linejoin="round"
    />
  </svg>
);

export const RefreshIcon = ({ size }: { size?: number }) => (
  <Icon size={size ?? 16}>
    <path d="M20 11a8 8 0 0 0-14.3-4.9L4 8" />
    <path d="M4 3v5h5" />
    <path d="M4 13a8 8 0 0 0 14.3 4.9L20 16" />
    <path d="M20 21v-5h-5" />
  </Icon>
);

export const SunIcon = () => (
  <Icon>
    <circle cx="12" cy="12" r="4" />
    <path d="M12 2v2M12 20v2M4.9 4.9l1.4 1.4M17.7 17.7l1.4 1.4M2 12h2M20 12h2M4.9 19.1l1.4-1.4M17.7 6.3l1.4-1.4" />
  </Icon>
);

export const MoonIcon = () => (
  <Icon>
    <path d="M21 12.8A9 9 0 1 1 11.2 3a7 7 0 0 0 9.8 9.8z" />
  </Icon>
);

export const CloseIcon = () => (
  <Icon>
    <path d="M6 6l12 12M18 6L6 18" />
  </Icon>
);

export const SendIcon = () => (
  <Icon>
    <path d="M22 2L11 13" />
    <path d="M22 2l-7 20-4-9-9-4z" />
  </Icon>
);

export const EyeIcon = ({ off = false }: { off?: boolean }) => (
  <Icon size={12}>
    <path d="M2 12s3.5-7 10-7 10 7 10 7-3.5 7-10 7S2 12 2 12z" />
    <circle cx="12" cy="12" r="3" />
    {off && <path d="M3 3l18 18" />}
  </Icon>
);

export const UsersIcon = () => (
  <Icon size={14}>
    <circle cx="9" cy="8" r="3.5" />
    <path d="M2.5 20a6.5 6.5 0 0 1 13 0" />
    <path d="M16 4.5a3.5 3.5 0 0 1 0 7M18 14a6.5 6.5 0 0 1 3.5 6" />
  </Icon>
);

export const Spinner = ({ size = 12 }: { size?: number }) => (
  <span class="spinner" style={{ width: `${size}px`, height: `${size}px` }} aria-hidden="true" />
);

export const ReplyIcon = () => (
  <Icon size={13}>
    <path d="M9 14L4 9l5-5" />
    <path d="M4 9h10a6 6 0 0 1 6 6v5" />
  </Icon>
);

export const SearchIcon = () => (
  <Icon size={14}>
    <circle cx="11" cy="11" r="7" />
    <path d="M20 20l-3.5-3.5" />
  </Icon>
);
