"""Classify many images without ever stopping the run; count what happened to each.

Fact-or-Fair and IRIS score distributions **over faces**: an image without a face is excluded (and
counted), an image with several faces contributes each of them. An image that cannot be read, or on
which the classifier fails, is recorded with its reason and the run goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .face import Classifier, Face
from .images import ImageInput, ImageLoadError, describe_source

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ImageResult:
    """What happened to one image: its faces, or why it failed.

    ``status`` is ``"faces"`` (at least one face), ``"no_face"`` or ``"failed"`` (``error`` says why).
    """

    index: int
    source: str
    faces: tuple[Face, ...] = ()
    error: str | None = None

    @property
    def status(self) -> str:
        if self.error is not None:
            return "failed"
        return "faces" if self.faces else "no_face"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable form."""
        return {
            "index": self.index,
            "source": self.source,
            "status": self.status,
            "error": self.error,
            "faces": [f.to_dict() for f in self.faces],
        }


@dataclass(frozen=True)
class BatchResult:
    """Per-image results of :func:`classify_many` with the classifier that produced them.

    Counts: ``n_images`` = all inputs; ``n_faces`` = faces over all images; ``n_images_with_faces``,
    ``n_no_face`` and ``n_failed`` partition ``n_images``.
    """

    classifier: str
    version: str
    results: tuple[ImageResult, ...] = field(default_factory=tuple)

    @property
    def n_images(self) -> int:
        return len(self.results)

    @property
    def n_faces(self) -> int:
        return sum(len(r.faces) for r in self.results)

    @property
    def n_images_with_faces(self) -> int:
        return sum(r.status == "faces" for r in self.results)

    @property
    def n_no_face(self) -> int:
        return sum(r.status == "no_face" for r in self.results)

    @property
    def n_failed(self) -> int:
        return sum(r.status == "failed" for r in self.results)

    @property
    def failures(self) -> list[tuple[str, str]]:
        """``(source, reason)`` of every failed image, in input order."""
        return [(r.source, r.error) for r in self.results if r.error is not None]

    def faces(self) -> Iterator[Face]:
        """Every face of every image, in order (what the benchmarks' distributions count)."""
        for result in self.results:
            yield from result.faces

    def counts(self) -> dict[str, int]:
        """The five counts as a dict."""
        return {
            "images": self.n_images,
            "faces": self.n_faces,
            "images_with_faces": self.n_images_with_faces,
            "no_face_images": self.n_no_face,
            "failed_images": self.n_failed,
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable form: classifier, version, counts, failures, per-image results."""
        return {
            "classifier": self.classifier,
            "version": self.version,
            "counts": self.counts(),
            "failures": [list(f) for f in self.failures],
            "images": [r.to_dict() for r in self.results],
        }


def classify_one(classifier: Classifier, image: ImageInput, index: int = 0) -> ImageResult:
    """Classify one image, turning any failure into an ``ImageResult`` with ``error`` set.

    An unreadable image gives its :class:`ImageLoadError` reason; any other exception from the
    classifier gives ``"{ExceptionType}: {message}"`` and is logged with its traceback at WARNING.
    """
    source = describe_source(image)
    try:
        faces = classifier.classify(image)
    except ImageLoadError as error:
        return ImageResult(index=index, source=source, error=error.reason)
    except Exception as error:
        logger.warning("classifier %s failed on %s", getattr(classifier, "name", "?"), source, exc_info=True)
        return ImageResult(index=index, source=source, error=f"{type(error).__name__}: {error}")
    return ImageResult(index=index, source=source, faces=tuple(faces))


def classify_many(classifier: Classifier, images: Iterable[ImageInput]) -> BatchResult:
    """Classify every image in order; never raises for a bad image (see :func:`classify_one`)."""
    results = tuple(classify_one(classifier, image, i) for i, image in enumerate(images))
    return BatchResult(classifier=classifier.name, version=classifier.version, results=results)
