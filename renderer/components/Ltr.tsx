import type { ReactNode } from 'react';

/**
 * Phone numbers, clocks, codes and addresses read left to right in every language: inside Arabic
 * text they keep their order (an isolate, so neither side reorders the other).
 */
export function Ltr({ children, className }: { children: ReactNode; className?: string }) {
  return (
    <bdi dir="ltr" className={className}>
      {children}
    </bdi>
  );
}
