/** The error a call throws, when it must throw one of a given class (anything else fails the test). */
export function thrown<E extends Error>(ErrorClass: abstract new (...args: never[]) => E, fn: () => unknown): E {
  try {
    fn();
  } catch (err) {
    if (err instanceof ErrorClass) return err;
    throw err;
  }
  throw new Error(`expected a ${ErrorClass.name}`);
}
