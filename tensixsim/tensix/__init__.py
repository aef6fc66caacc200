"""The Tensix coprocessor."""
