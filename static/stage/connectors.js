// Connectors: the scene's polylines (embedding threads, residual rails, memory arcs, the E–Eᵀ tie,
// the autoregressive loop), one LineSegments per kind so a step can draw or pulse one kind alone.
import * as THREE from "three";

const OPACITY = { thread: 0.55 };

/** scene.connectors → THREE.Group of one LineSegments per kind (named by the kind). */
export function buildConnectors(connectors) {
  const group = new THREE.Group();
  for (const { kind, color, lines } of connectors) {
    const p = [];
    for (const line of lines) for (let i = 0; i + 1 < line.length; i++) p.push(...line[i], ...line[i + 1]);
    const g = new THREE.BufferGeometry();
    g.setAttribute("position", new THREE.BufferAttribute(new Float32Array(p), 3));
    g.computeBoundingSphere();
    const obj = new THREE.LineSegments(
      g,
      new THREE.LineBasicMaterial({ color, transparent: true, opacity: restingOpacity(kind), depthWrite: false }),
    );
    obj.name = kind;
    obj.userData.vertexCount = p.length / 3;
    obj.renderOrder = 1;
    group.add(obj);
  }
  return group;
}

export function restingOpacity(kind) {
  return OPACITY[kind] ?? 0.95;
}
