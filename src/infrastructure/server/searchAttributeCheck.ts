import { YIEM_SEARCH_ATTRIBUTES } from './devServer.ts';

/** What the check needs of an operator service: the client's and the worker's connections both have it. */
export interface SearchAttributeLister {
  listSearchAttributes(request: {
    namespace: string;
  }): Promise<{ customAttributes?: { [name: string]: unknown } | null }>;
}

/** yiem's search attributes that `namespace` has not registered, in the order yiem defines them. */
export async function missingSearchAttributes(
  operator: SearchAttributeLister,
  namespace: string,
): Promise<string[]> {
  const { customAttributes } = await operator.listSearchAttributes({ namespace });
  const registered = customAttributes ?? {};
  return Object.keys(YIEM_SEARCH_ATTRIBUTES).filter((name) => !(name in registered));
}

/**
 * The `temporal` commands that register `missing` in `namespace`: one per type, since the CLI takes
 * several `--name`s but a single `--type`.
 */
export function searchAttributeCreateCommand(
  namespace: string,
  missing: readonly string[],
  address?: string,
): string {
  const byType = new Map<string, string[]>();
  for (const name of missing) {
    const type = YIEM_SEARCH_ATTRIBUTES[name as keyof typeof YIEM_SEARCH_ATTRIBUTES];
    if (type) byType.set(type, [...(byType.get(type) ?? []), name]);
  }
  const where = `${address ? ` --address ${address}` : ''} --namespace ${namespace}`;
  return [...byType]
    .map(
      ([type, names]) =>
        `temporal operator search-attribute create${where} ${names.map((name) => `--name ${name}`).join(' ')} --type ${type}`,
    )
    .join(' && ');
}

/** The sentence the worker and `yiem doctor` say about a namespace that lacks some of yiem's search attributes. */
export function missingSearchAttributesMessage(
  namespace: string,
  missing: readonly string[],
  address?: string,
): string {
  return (
    `Namespace "${namespace}" lacks the search attribute${missing.length === 1 ? '' : 's'} ${missing.join(', ')}: ` +
    'conversations still run, but cannot be found or listed by them' +
    `${missing.includes('YiemCost') ? ', and their cost is not searchable' : ''}. ` +
    `Add ${missing.length === 1 ? 'it' : 'them'} with: ${searchAttributeCreateCommand(namespace, missing, address)}`
  );
}
