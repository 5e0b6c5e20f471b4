// Which account owns a device several accounts hold: the owner alone registers its webhook, probes
// it and sends its commands. Pure: the holders, the entries' choice and the stored owner in, one id out.

export interface OwnerFacts {
  /** The accounts that hold the device, in config order (the main account first). */
  readonly holders: readonly string[];
  /** The accounts the config's entries for the device name with `"account"`, in config order. */
  readonly named: readonly string[];
  /** The owner kept in storage from an earlier run. */
  readonly stored: string | undefined;
  /** Linked now ("re-authorization needed" counts: its callbacks still arrive). */
  readonly linked: (account: string) => boolean;
}

/**
 * The owner, in this order, each only while that account is linked and holds the device: the
 * account an entry names, the stored owner, the first holder. Undefined when no holder is linked.
 */
export function ownerOf(facts: OwnerFacts): string | undefined {
  const eligible = (account: string | undefined): account is string => account !== undefined && facts.holders.includes(account) && facts.linked(account);
  return facts.named.find(eligible) ?? (eligible(facts.stored) ? facts.stored : undefined) ?? facts.holders.find(eligible);
}
