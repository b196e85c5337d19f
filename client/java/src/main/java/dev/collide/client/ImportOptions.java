package dev.collide.client;

/**
 * Where an import goes: {@code scene} (null or "": the header's name), {@code replace} a scene of
 * that name (else ALREADY_EXISTS), {@code checkOnly} (check the stream as an import, create
 * nothing).
 */
public record ImportOptions(String scene, boolean replace, boolean checkOnly) {
  /** Imports under {@code scene}, not replacing. */
  public static ImportOptions as(String scene) {
    return new ImportOptions(scene, false, false);
  }

  /** The same, replacing a scene of that name. */
  public ImportOptions replacing() {
    return new ImportOptions(scene, true, checkOnly);
  }
}
