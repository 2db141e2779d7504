/**
 * The repositories a push event names (`syncprims run --webhook-addr`,
 * docs/source.md "Webhooks"): GitHub's and Gitea's push events
 * (`repository.clone_url`, `ssh_url`, `html_url`, `git_url`), GitLab's
 * (`project.git_http_url`, `git_ssh_url`, `web_url`; `repository.*`), and a
 * generic body `{"url": ...}` or `{"urls": [...]}` (a registry's hook, a CI
 * step after `flux push artifact`: the `oci://` URL).
 * Only the URLs are read; nothing else of the body is trusted or kept.
 */

const URL_FIELDS = ['clone_url', 'ssh_url', 'html_url', 'git_url', 'git_http_url', 'git_ssh_url', 'web_url', 'url', 'http_url', 'homepage'] as const;

/** At most this many URLs are taken from one body. */
const MAX_URLS = 32;

/** The URLs a push event's body names; `[]` when it is not JSON or names none. */
export function pushedUrls(body: string): string[] {
  let event: unknown;
  try {
    event = JSON.parse(body);
  } catch {
    return [];
  }
  if (!isObject(event)) return [];
  const urls = new Set<string>();
  const take = (v: unknown): void => {
    if (typeof v === 'string' && v.length > 0 && v.length <= 4096 && urls.size < MAX_URLS) urls.add(v);
  };
  take(event.url);
  if (Array.isArray(event.urls)) event.urls.forEach(take);
  for (const holder of [event.repository, event.project]) {
    if (!isObject(holder)) continue;
    for (const field of URL_FIELDS) take(holder[field]);
  }
  return [...urls];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
