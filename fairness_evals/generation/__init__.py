"""Text-to-image backends for lmms-eval, and the plumbing the image-generation tasks share.

lmms-eval models (registered through the ``lmms_eval.models`` entry point, :mod:`.manifests`):

- ``from_folder`` (:mod:`.from_folder`): answers each request with images already on disk, laid out by
  ``fairness-evals export ... --t2i-layout`` (:mod:`.layout`);
- ``diffusers_t2i`` (:mod:`.diffusers_t2i`): any diffusers ``DiffusionPipeline`` (SD, SDXL, FLUX...).

Task side: :mod:`.contract` reads every response form lmms-eval's generators use, :mod:`.image_outcomes`
classifies each returned image with :mod:`fairness_evals.faces` and says what happened to it. Importing this
package is cheap: lmms-eval, torch and diffusers are imported by the module that needs them.
"""
