// Light/dark theme. index.html applies the same rule inline before the first paint.

export type Theme = "light" | "dark";
export const THEME_KEY = "cafleet-admin-theme";

const DARK_QUERY = "(prefers-color-scheme: dark)";

function stored(): Theme | null {
  try {
    const value = localStorage.getItem(THEME_KEY);
    return value === "light" || value === "dark" ? value : null;
  } catch {
    return null;
  }
}

const systemTheme = (): Theme => (matchMedia(DARK_QUERY).matches ? "dark" : "light");

export const currentTheme = (): Theme => stored() ?? systemTheme();

const apply = (theme: Theme): Theme => {
  document.documentElement.dataset["theme"] = theme;
  return theme;
};

export function saveTheme(theme: Theme): Theme {
  try {
    localStorage.setItem(THEME_KEY, theme);
  } catch {
    // storage unavailable: the choice lasts for this page only
  }
  return apply(theme);
}

/** Follows the system setting while the user has not picked a theme. */
export function onSystemThemeChange(listener: (theme: Theme) => void): () => void {
  const media = matchMedia(DARK_QUERY);
  const handler = (): void => {
    if (stored() === null) listener(apply(systemTheme()));
  };
  media.addEventListener("change", handler);
  return () => media.removeEventListener("change", handler);
}
